/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  transform: { '^.+\\.ts$': 'ts-jest' },
  setupFiles: ['<rootDir>/test/helpers/env.ts'],
  setupFilesAfterEnv: ['<rootDir>/test/helpers/wire.ts'],
  globalSetup: '<rootDir>/test/helpers/globalSetup.ts',
  globalTeardown: '<rootDir>/test/helpers/globalTeardown.ts',
  reporters: ['default', '<rootDir>/test/helpers/summaryReporter.js'],
  // Waits in the tests are bounded by progress (test/helpers/smtp.ts waitFor, progress.ts): a test
  // on a loaded machine may take minutes and still be making progress. This bound only ends a
  // test whose wait has none (a hung hook or request).
  testTimeout: 600000,
  maxWorkers: 2,
};
