// @ts-check
import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';

const SERVICES = ['gateway', 'sessions', 'jobs', 'templates', 'dashboard', 'contacts'];

/**
 * Module boundaries (DESIGN §2): a service depends only on libs/*, never on another service; the web
 * depends only on @bns/contracts; libs never depend on services.
 */
const serviceBoundary = (self, extraPatterns = []) => ({
  'no-restricted-imports': [
    'error',
    {
      patterns: [
        {
          group: SERVICES.filter((s) => s !== self).map((s) => `@bns/${s}`),
          message: 'A service never imports another service: talk over NATS through @bns/contracts.',
        },
        {
          group: ['**/services/*/**', '../../*/src/**'],
          message:
            'Reach other code through a workspace package (@bns/contracts, @bns/service-kit), not a relative path.',
        },
        ...extraPatterns,
      ],
    },
  ],
});

/**
 * The jobs service's feature folders, lowest first (STYLE "Feature folders depend one way"): a folder
 * imports only the folders before it, never one after it, so no two folders depend on each other.
 * When two folders need the same query, it gets one owner below both. `main.ts` and the in-process
 * test harness (`src/__tests__`) compose every folder and stand outside the order.
 */
const JOBS_LAYERS = [
  'config',
  'metrics',
  'store',
  'media',
  'events',
  'policy',
  'queue',
  'optouts',
  'results',
  'admission',
  'jobs',
  'database',
];
const jobsLayerRules = JOBS_LAYERS.map((layer, i) => {
  const above = JOBS_LAYERS.slice(i + 1);
  const patterns =
    above.length === 0
      ? []
      : [
          {
            regex: `^(\\.\\./)+(${above.join('|')})/`,
            message: `services/jobs/src/${layer} sits below ${above.join(', ')}: it must not import them (see JOBS_LAYERS in eslint.config.js).`,
          },
        ];
  return { files: [`services/jobs/src/${layer}/**/*.ts`], rules: serviceBoundary('jobs', patterns) };
});

export default tseslint.config(
  {
    ignores: [
      '**/dist/**',
      '**/node_modules/**',
      '**/coverage/**',
      'test-output/**',
      '.data/**',
      '**/*.js',
      '**/*.mjs',
      '**/*.cjs',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts', '**/*.tsx'],
    languageOptions: {
      globals: { ...globals.node },
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-empty-object-type': 'off',
    },
  },
  ...SERVICES.map((s) => ({ files: [`services/${s}/**/*.ts`], rules: serviceBoundary(s) })),
  ...jobsLayerRules,
  {
    files: ['libs/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: [{ group: SERVICES.map((s) => `@bns/${s}`), message: 'Libraries never depend on services.' }] },
      ],
    },
  },
  {
    // common/ is below every service's folder of the contracts: the cross-service maps (RequestMap,
    // EventMap, the socket surface) live in registry/, so the jobs contracts can import common/ freely.
    files: ['libs/contracts/src/common/**/*.ts'],
    ignores: ['**/__tests__/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { group: SERVICES.map((s) => `@bns/${s}`), message: 'Libraries never depend on services.' },
            {
              group: ['../jobs/*', '../registry/*'],
              message:
                'common/ never imports the jobs contracts or the registry (jobs imports common/): move what it needs down into common/, or its user up.',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['web/**/*.ts', 'web/**/*.tsx'],
    languageOptions: { globals: { ...globals.browser } },
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: [{ group: ['@bns/*', '!@bns/contracts'], message: 'The web imports only @bns/contracts.' }] },
      ],
    },
  },
  {
    files: ['**/test/**/*.ts', '**/__tests__/**/*.ts', '**/*.test.ts', '**/*.test.tsx', 'libs/testing/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off', '@typescript-eslint/no-non-null-assertion': 'off' },
  },
);
