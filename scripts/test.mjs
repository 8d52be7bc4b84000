#!/usr/bin/env node
// `npm test`: builds everything, then runs every test of every project (unit, integration against a
// real Postgres + NATS, the launcher test, deployment checks, the fault suite, end-to-end in headless
// Chromium), and closes with one line of totals.
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { TIMED_TEST_FILES } from '../jest.preset.js';
import { ensureDependencies, fail, ROOT, run, runAsync, TOOL_ENV, useNode24 } from './lib.mjs';

await useNode24();
ensureDependencies();
const started = Date.now();
const resultsDir = join(ROOT, 'test-output', 'results');
rmSync(resultsDir, { recursive: true, force: true });

/** The *.test.mjs files of a folder, relative to the root. */
const testFiles = (dir) =>
  readdirSync(join(ROOT, dir))
    .filter((f) => f.endsWith('.test.mjs'))
    .sort()
    .map((f) => join(dir, f));

const steps = [];
const step = async (name, fn) => {
  const t = Date.now();
  const status = await fn();
  steps.push({ name, status, seconds: Math.round((Date.now() - t) / 1000) });
  return status;
};

/**
 * The projects' tests run in three lanes at once (TEST_LANES=1: one after another, 2: two lanes). Most
 * of an integration test is waiting (services starting, paced sends, time-outs), so on two cores the
 * lanes take about as long as the longest one. The lanes are balanced by the projects' wall times that
 * the closing summary prints (a quiet 2-core machine, in seconds: jobs 628, service-kit 50; gateway 491,
 * dashboard 89, contacts 43, templates 35, contracts and testing 18 each; integrations 324, sessions 200,
 * web and deploy about 130): the jobs service with the kit, the gateway with the small projects, then
 * the rest. Each lane runs its projects one at a time and each
 * project's Jest its files one at a time (Jest's default on two cores). A lane's output after the first
 * is printed whole when it ends, so lanes never interleave; the closing summary names every failed test.
 */
const TEST_LANES = Number(process.env.TEST_LANES ?? 3);
if (![1, 2, 3].includes(TEST_LANES))
  fail('TEST_LANES: 1 (one project after another), 2 (two lanes) or 3 (three lanes, the default)');
const LANES = {
  2: [['@bns/jobs', '@bns/dashboard', '@bns/templates']],
  3: [
    ['@bns/jobs', '@bns/service-kit'],
    ['@bns/gateway', '@bns/dashboard', '@bns/templates', '@bns/contacts', '@bns/contracts', '@bns/testing'],
  ],
}[TEST_LANES];
// The build step above built every project: without --exclude-task-dependencies, --skip-nx-cache
// would build all nine again (about a minute on two cores) before the first test.
const nxTest = (...select) => [
  'nx',
  'run-many',
  '-t',
  'test',
  '--output-style=static',
  '--parallel=1',
  '--skip-nx-cache',
  '--exclude-task-dependencies',
  ...select,
];

/** Runs a command with its output kept, and prints it in one piece when it ends. */
function runQuietly(command, args, label, env = LANE_ENV) {
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'], env });
    const chunks = [];
    child.stdout.on('data', (c) => chunks.push(c));
    child.stderr.on('data', (c) => chunks.push(c));
    child.on('close', (code, signal) => {
      process.stdout.write(`\n── ${label}: its output ──\n`);
      process.stdout.write(Buffer.concat(chunks));
      process.stdout.write(`── ${label}: end ──\n`);
      resolve(code ?? (signal ? 1 : 0));
    });
  });
}

/** The lanes leave the timed test files out: they run alone afterwards (timedAlone). */
const LANE_ENV = { ...TOOL_ENV, JEST_SKIP_TIMED: TEST_LANES === 1 ? '0' : '1' };

async function unitAndIntegration() {
  if (TEST_LANES === 1) return run('npx', nxTest());
  // The named lanes, then one lane with every project none of them names.
  const named = LANES.flat();
  const t0 = Date.now();
  /** Each lane's wall time, printed in the closing summary to balance the lanes by. */
  const timed = (lane, projects, pending) =>
    pending.then((code) => {
      laneTimes.push(`lane ${lane} (${projects}): ${Math.round((Date.now() - t0) / 1000)} s`);
      return code;
    });
  const [first, ...rest] = await Promise.all([
    timed(1, LANES[0].join(', '), runAsync('npx', nxTest(`--projects=${LANES[0].join(',')}`), { env: LANE_ENV })),
    ...LANES.slice(1).map((projects, i) =>
      timed(
        i + 2,
        projects.join(', '),
        runQuietly('npx', nxTest(`--projects=${projects.join(',')}`), `unit + integration, lane ${i + 2}`),
      ),
    ),
    timed(
      LANES.length + 1,
      'the rest',
      runQuietly('npx', nxTest(`--exclude=${named.join(',')}`), `unit + integration, lane ${LANES.length + 1}`),
    ),
  ]);
  return [first, ...rest].find((code) => code !== 0) ?? 0;
}
const laneTimes = [];

if ((await step('build', () => run('npx', ['nx', 'run-many', '-t', 'build', '--output-style=static']))) !== 0)
  fail('Build failed: no test was run.');
// Formatting is Prettier's (an unformatted file fails the run), the rest is ESLint's: the two at once,
// one core each.
await step('lint', async () => {
  const codes = await Promise.all([
    runAsync('npx', ['prettier', '--check', '--log-level=warn', '.']),
    runAsync('npx', ['eslint', 'libs', 'services', 'web/src']),
  ]);
  return codes.find((code) => code !== 0) ?? 0;
});
await step(
  `unit + integration (nx test, ${TEST_LANES === 1 ? 'one lane' : `${TEST_LANES} lanes`})`,
  unitAndIntegration,
);
/** The files whose assertions are times, each project's alone, with nothing else running (jest.preset.js). */
function timedAlone() {
  const byProject = new Map();
  for (const file of TIMED_TEST_FILES) {
    const [kind, name, ...rest] = file.split('/');
    const dir = join(kind, name);
    byProject.set(dir, [...(byProject.get(dir) ?? []), rest.join('/')]);
  }
  let status = 0;
  for (const [dir, files] of byProject) {
    const code = run(
      process.execPath,
      ['--experimental-vm-modules', join(ROOT, 'node_modules/jest/bin/jest.js'), '--runTestsByPath', ...files],
      { cwd: join(ROOT, dir), env: { ...TOOL_ENV, JEST_SKIP_TIMED: '0', TEST_RESULTS_SUFFIX: '-timed' } },
    );
    if (code !== 0) status = code;
  }
  return status;
}
if (TEST_LANES !== 1) await step('timing checks, each alone', timedAlone);
await step('launcher', () =>
  // Node 22+ reads --test arguments as files or globs, not folders; the totals reporter prints nothing
  // (a /dev/null destination fails: Node 24 fsyncs it on close).
  run(
    process.execPath,
    [
      '--test',
      '--test-reporter=spec',
      '--test-reporter-destination=stdout',
      `--test-reporter=${join(ROOT, 'scripts/node-test-results-reporter.mjs')}`,
      '--test-reporter-destination=stdout',
      ...testFiles('scripts/test'),
    ],
    {
      env: { ...process.env, TEST_RESULTS_NAME: 'launcher' },
    },
  ),
);
await step('fault suite (kill -9, NATS and Postgres restarts)', () => run(process.execPath, ['scripts/chaos/run.mjs']));
// The two browser suites side by side, each on its own system: most of their time is waiting for the
// page (toasts, pacing, reconnects), and the first hour's stall limit (500 ms) holds with the other
// running (about 200 ms seen). The second one's output is printed whole when it ends.
const e2eEnv = { ...process.env, E2E_NO_BUILD: '1' };
await Promise.all([
  step('end-to-end (headless Chromium)', () => runAsync(process.execPath, ['scripts/e2e/run.mjs'], { env: e2eEnv })),
  step('end-to-end: the first hour (big files, checks, navigation, axe)', () =>
    runQuietly(process.execPath, ['scripts/e2e/first-hour.mjs'], 'end-to-end: the first hour', e2eEnv),
  ),
]);

const totals = { passed: 0, failed: 0, skipped: 0, failures: [], files: [] };
if (existsSync(resultsDir)) {
  for (const file of readdirSync(resultsDir)) {
    const r = JSON.parse(readFileSync(join(resultsDir, file), 'utf8'));
    totals.passed += r.passed;
    totals.failed += r.failed;
    totals.skipped += r.skipped ?? 0;
    totals.failures.push(...(r.failures ?? []));
    totals.files.push(...(r.files ?? []));
  }
}
const failedSteps = steps.filter((s) => s.status !== 0);
// Where the minutes went: the slowest test files, to know what to speed up first.
const slowest = totals.files.sort((a, b) => b.seconds - a.seconds).slice(0, 12);
if (slowest.length > 0) {
  process.stdout.write('\n── slowest test files ──\n');
  for (const f of slowest) process.stdout.write(`${String(f.seconds).padStart(6)} s  ${f.file}\n`);
}
if (laneTimes.length > 0) process.stdout.write(`\n── lanes, in the order they ended ──\n${laneTimes.join('\n')}\n`);
process.stdout.write('\n── npm test ──\n');
for (const s of steps) process.stdout.write(`${s.status === 0 ? 'ok  ' : 'FAIL'} ${s.name} (${s.seconds} s)\n`);
// The failed tests by name, last, so that a log cut to its tail still says what broke.
for (const f of totals.failures) process.stdout.write(`  ✕ ${f}\n`);
process.stdout.write(`total ${Math.round((Date.now() - started) / 1000)} s\n`);
// A failed step with no failed test (a crash, a lint error) still fails the run.
const failed = Math.max(
  totals.failed,
  failedSteps.length > 0 && totals.failed === 0 ? failedSteps.length : totals.failed,
);
process.stdout.write(`${totals.passed} passed, ${failed} failed, ${totals.skipped} skipped\n`);
process.exit(failedSteps.length > 0 || failed > 0 ? 1 : 0);
