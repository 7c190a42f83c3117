// Three tiers: unit tests beside the code, contract tests against both actor hosts,
// end-to-end tests against real processes (embedded gateway, Dapr topology) in test/.
const transform = { '^.+\\.ts$': ['@swc/jest', { jsc: { parser: { syntax: 'typescript' }, target: 'es2022', keepClassNames: true } }] };
module.exports = {
  projects: [
    { displayName: 'unit', testEnvironment: 'node', transform, testMatch: ['<rootDir>/{lib,actors,services,providers,catalog,cli,topology}/**/*.test.ts', '<rootDir>/test/support/*.test.ts'] },
    { displayName: 'e2e-embedded', testEnvironment: 'node', transform, testMatch: ['<rootDir>/test/embedded/**/*.test.ts'] },
    { displayName: 'e2e-dapr', testEnvironment: 'node', transform, testMatch: ['<rootDir>/test/dapr/**/*.test.ts'] },
  ],
  testTimeout: 60000,
};
