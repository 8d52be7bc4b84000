// Shared Jest setup: ESM + SWC with decorator metadata (Nest DI needs emitDecoratorMetadata).
export default {
  testEnvironment: 'node',
  extensionsToTreatAsEsm: ['.ts'],
  moduleNameMapper: {
    '^(\\.{1,2}/.*)\\.js$': '$1',
    // Workspace libraries from source, so in-process tests need no build of them.
    '^@bns/(contracts|service-kit|testing)$': '<rootDir>/../../libs/$1/src/index.ts',
  },
  transform: {
    '^.+\\.ts$': [
      '@swc/jest',
      {
        jsc: {
          parser: { syntax: 'typescript', decorators: true },
          transform: { legacyDecorator: true, decoratorMetadata: true },
          target: 'es2022',
        },
        module: { type: 'es6' },
      },
    ],
  },
  testMatch: ['<rootDir>/src/**/__tests__/**/*.spec.ts', '<rootDir>/test/**/*.integration-spec.ts'],
  testTimeout: 60_000,
  reporters: ['default', '<rootDir>/../../scripts/jest-results-reporter.cjs'],
};
