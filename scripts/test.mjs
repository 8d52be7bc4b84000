#!/usr/bin/env node
// `npm test`: builds everything, then runs every test of every project (unit, integration against a
// real Postgres + NATS, the launcher test, deployment checks, the fault suite, end-to-end in headless
// Chromium), and closes with one line of totals.
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { ensureDependencies, fail, ROOT, run, useNode24 } from './lib.mjs';

await useNode24();
ensureDependencies();
const started = Date.now();
const resultsDir = join(ROOT, 'test-output', 'results');
rmSync(resultsDir, { recursive: true, force: true });

/** The *.test.mjs files of a folder, relative to the root. */
const testFiles = (dir) => readdirSync(join(ROOT, dir)).filter((f) => f.endsWith('.test.mjs')).sort().map((f) => join(dir, f));

const steps = [];
const step = (name, fn) => {
  const t = Date.now();
  const status = fn();
  steps.push({ name, status, seconds: Math.round((Date.now() - t) / 1000) });
  return status;
};

if (step('build', () => run('npx', ['nx', 'run-many', '-t', 'build', '--output-style=static'])) !== 0) fail('Build failed: no test was run.');
step('lint', () => run('npx', ['eslint', 'libs', 'services', 'web/src']));
// The build step above built every project: without --exclude-task-dependencies, --skip-nx-cache
// would build all nine again (about a minute on two cores) before the first test.
step('unit + integration (nx test)', () =>
  run('npx', ['nx', 'run-many', '-t', 'test', '--output-style=static', '--parallel=1', '--skip-nx-cache', '--exclude-task-dependencies']),
);
step('launcher', () =>
  // Node 22+ reads --test arguments as files or globs, not folders; the totals reporter prints nothing
  // (a /dev/null destination fails: Node 24 fsyncs it on close).
  run(process.execPath, ['--test', '--test-reporter=spec', '--test-reporter-destination=stdout', `--test-reporter=${join(ROOT, 'scripts/node-test-results-reporter.mjs')}`, '--test-reporter-destination=stdout', ...testFiles('scripts/test')], {
    env: { ...process.env, TEST_RESULTS_NAME: 'launcher' },
  }),
);
step('fault suite (kill -9, NATS and Postgres restarts)', () => run(process.execPath, ['scripts/chaos/run.mjs']));
if (existsSync(join(ROOT, 'scripts', 'e2e', 'run.mjs'))) step('end-to-end (headless Chromium)', () => run(process.execPath, ['scripts/e2e/run.mjs'], { env: { ...process.env, E2E_NO_BUILD: '1' } }));

const totals = { passed: 0, failed: 0, skipped: 0, failures: [] };
if (existsSync(resultsDir)) {
  for (const file of readdirSync(resultsDir)) {
    const r = JSON.parse(readFileSync(join(resultsDir, file), 'utf8'));
    totals.passed += r.passed;
    totals.failed += r.failed;
    totals.skipped += r.skipped ?? 0;
    totals.failures.push(...(r.failures ?? []));
  }
}
const failedSteps = steps.filter((s) => s.status !== 0);
process.stdout.write('\n── npm test ──\n');
for (const s of steps) process.stdout.write(`${s.status === 0 ? 'ok  ' : 'FAIL'} ${s.name} (${s.seconds} s)\n`);
// The failed tests by name, last, so that a log cut to its tail still says what broke.
for (const f of totals.failures) process.stdout.write(`  ✕ ${f}\n`);
process.stdout.write(`total ${Math.round((Date.now() - started) / 1000)} s\n`);
// A failed step with no failed test (a crash, a lint error) still fails the run.
const failed = Math.max(totals.failed, failedSteps.length > 0 && totals.failed === 0 ? failedSteps.length : totals.failed);
process.stdout.write(`${totals.passed} passed, ${failed} failed, ${totals.skipped} skipped\n`);
process.exit(failedSteps.length > 0 || failed > 0 ? 1 : 0);
