// Three tiers: unit tests beside the code, contract tests against both actor hosts,
// end-to-end tests against real processes (embedded gateway, Dapr topology) in test/.
const swc = ['@swc/jest', { jsc: { parser: { syntax: 'typescript' }, target: 'es2022', keepClassNames: true } }];
// jose and eventsource-parser ship ES modules only; Jest's CommonJS loader requires ES modules
// only under Node's --experimental-vm-modules (on Node 24 too: checked), so they are compiled
// like our own code. (The built services load them with Node 24's require of ES modules.)
const transform = { '^.+\\.ts$': swc, '^.+/node_modules/(jose|eventsource-parser)/.+\\.js$': swc };
const transformIgnorePatterns = ['/node_modules/(?!(jose|eventsource-parser)/)'];
module.exports = {
  projects: [
    { displayName: 'unit', testEnvironment: 'node', transform, transformIgnorePatterns, testMatch: ['<rootDir>/{lib,actors,services,providers,catalog,cli,topology,bench}/**/*.test.ts', '<rootDir>/test/support/*.test.ts', '<rootDir>/test/*.test.ts'] },
    { displayName: 'e2e-embedded', testEnvironment: 'node', transform, transformIgnorePatterns, testMatch: ['<rootDir>/test/embedded/**/*.test.ts'] },
    { displayName: 'e2e-dapr', testEnvironment: 'node', transform, transformIgnorePatterns, testMatch: ['<rootDir>/test/dapr/**/*.test.ts'] },
  ],
  testTimeout: 60000,
  // One temporary directory per run, removed at its end (test/support/jest-temp-dir.js).
  globalSetup: '<rootDir>/test/support/jest-global-setup.js',
  globalTeardown: '<rootDir>/test/support/jest-global-teardown.js',
};
