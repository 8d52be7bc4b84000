#!/usr/bin/env node
// What the system costs Postgres while nothing is sent: after linking `accounts` users and one
// warm-up job, `seconds` of idleness metered. Prints Postgres CPU per second and the statements run
// per second (most frequent first, then by execution time), so background polling shows up.
//   flock /tmp/bench.lock node scripts/bench/idle-postgres.mjs [accounts=200] [seconds=10]
import { countResults, linkedUsers, meter, sleep, startBench, warmUp } from './jobs-lib.mjs';

const ACCOUNTS = Number(process.argv[2] ?? 200);
const SECONDS = Number(process.argv[3] ?? 10);

const bench = await startBench({ SEND_DELAY_MS: '0', SEND_JITTER_MS: '0' });
const results = countResults(bench.nc);
const metered = await meter(bench, { top: 20 });
try {
  const users = await linkedUsers(bench, ACCOUNTS, 'idle');
  await warmUp(users[0], results, 20);
  await sleep(3000);
  await metered.start();
  await sleep(SECONDS * 1000);
  // "per message" below is per second of idleness.
  await metered.report(`idle, ${ACCOUNTS} linked accounts, per second`, SECONDS);
} finally {
  await metered.stop();
  results.stop();
  await bench.stop();
}
