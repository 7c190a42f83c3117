// Three tiers: unit tests beside the code, contract tests against both actor hosts,
// end-to-end tests against real processes (embedded gateway, Dapr topology) in test/.
const swc = ['@swc/jest', { jsc: { parser: { syntax: 'typescript' }, target: 'es2022', keepClassNames: true } }];
// jose ships ES modules only; Jest's CommonJS loader requires ES modules only under Node's
// --experimental-vm-modules (on Node 24 too: checked), so jose is compiled like our own code.
const transform = { '^.+\\.ts$': swc, '^.+/node_modules/jose/.+\\.js$': swc };
const transformIgnorePatterns = ['/node_modules/(?!jose/)'];
module.exports = {
  projects: [
    { displayName: 'unit', testEnvironment: 'node', transform, transformIgnorePatterns, testMatch: ['<rootDir>/{lib,actors,services,providers,catalog,cli,topology,bench}/**/*.test.ts', '<rootDir>/test/support/*.test.ts'] },
    { displayName: 'e2e-embedded', testEnvironment: 'node', transform, transformIgnorePatterns, testMatch: ['<rootDir>/test/embedded/**/*.test.ts'] },
    { displayName: 'e2e-dapr', testEnvironment: 'node', transform, transformIgnorePatterns, testMatch: ['<rootDir>/test/dapr/**/*.test.ts'] },
  ],
  testTimeout: 60000,
};
