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
  // Waits in the tests are upper bounds: a full run loads both cores (two full builds, process tests).
  testTimeout: 60000,
  maxWorkers: 2,
};
