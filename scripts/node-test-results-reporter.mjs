// node:test reporter that writes totals to test-output/results/<name>.json (name from TEST_RESULTS_NAME).
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { ROOT } from './lib.mjs';

const reasonOf = (event) =>
  String(event.data.details?.error?.cause?.message ?? event.data.details?.error?.message ?? '')
    .split('\n')[0]
    .slice(0, 300);
const where = (event) => (event.data.file ? relative(ROOT, event.data.file) : '?');

export default async function* reporter(source) {
  const totals = { passed: 0, failed: 0, skipped: 0, failures: [] };
  for await (const event of source) {
    // A suite fails on its own when one of its hooks does (its tests are then cancelled): its reason is the
    // cause, so it is listed too, though it is not counted as a test.
    if (
      event.type === 'test:fail' &&
      event.data.details?.type === 'suite' &&
      event.data.details?.error?.failureType !== 'subtestsFailed'
    ) {
      totals.failures.push(`${where(event)} › ${event.data.name} (its hook): ${reasonOf(event)}`);
      continue;
    }
    if (event.type === 'test:pass' && event.data.details?.type !== 'suite') {
      if (event.data.skip || event.data.todo) totals.skipped++;
      else totals.passed++;
    } else if (event.type === 'test:fail' && event.data.details?.type !== 'suite') {
      totals.failed++;
      totals.failures.push(`${where(event)} › ${event.data.name}: ${reasonOf(event)}`);
    }
  }
  const dir = join(ROOT, 'test-output', 'results');
  mkdirSync(dir, { recursive: true });
  const name = process.env.TEST_RESULTS_NAME ?? 'node-test';
  writeFileSync(join(dir, `${name}.json`), JSON.stringify({ name, ...totals }));
  yield '';
}
