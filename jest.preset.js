// Shared Jest setup: ESM + SWC with decorator metadata (Nest DI needs emitDecoratorMetadata).

/**
 * Test files whose assertions are times (a p99 against an earlier p99, a paced slot): `npm test` runs
 * them alone after the parallel lanes (JEST_SKIP_TIMED=1 leaves them out of the lanes), so the other
 * lanes' load does not decide them. Paths from the repository root.
 */
export const TIMED_TEST_FILES = [
  'services/gateway/test/nats-restart.integration-spec.ts',
  'services/gateway/test/noisy-neighbour.integration-spec.ts',
  'services/jobs/src/queue/__tests__/lane-queue.medium.spec.ts',
];

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
  testPathIgnorePatterns: [
    '/node_modules/',
    ...(process.env.JEST_SKIP_TIMED === '1' ? TIMED_TEST_FILES.map((f) => `/${f.replaceAll('.', '\\.')}$`) : []),
  ],
  reporters: ['default', '<rootDir>/../../scripts/jest-results-reporter.cjs'],
};
