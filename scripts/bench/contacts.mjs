#!/usr/bin/env node
// The contact book at its size limit: POST /api/contacts/import of `rows` contacts (timed to the answer,
// the contacts service's peak RSS sampled every 25 ms), a second import up to `total` contacts, then
// GET /api/contacts searches (by number, name, tag, field value, and plain pages) and segment counts,
// each `samples` times, with their p50/p99 through the gateway.
//   flock /tmp/bench.lock node scripts/bench/contacts.mjs [rows=100000] [total=200000] [samples=200]
import { readFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { useNode24 } from '../runtime.mjs';
import { api, devSignIn, startSystem } from '@bns/testing';

await useNode24();

const ROWS = Number(process.argv[2] ?? 100_000);
const TOTAL = Number(process.argv[3] ?? 200_000);
const SAMPLES = Number(process.argv[4] ?? 200);
const DISTRICTS = ['Central', 'Wan Chai', 'Sha Tin', 'Tsuen Wan', 'Mong Kok', 'Tuen Mun'];

const rssKiB = (pid) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? NaN);
const mib = (kib) => (kib / 1024).toFixed(1);
const pct = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
const rowsFrom = (n, from) =>
  Array.from({ length: n }, (_, i) => ({
    phone: String(50_000_000 + from + i),
    name: `Customer ${from + i}`,
    fields: { district: DISTRICTS[(from + i) % DISTRICTS.length], order: `HK-${100000 + from + i}` },
    tags: (from + i) % 10 === 0 ? ['vip'] : ['regular'],
  }));

console.log(
  `${cpus().length} cores, load average ${loadavg()
    .map((l) => l.toFixed(1))
    .join(' ')}`,
);
const sys = await startSystem({ services: ['contacts'], serviceEnv: { gateway: { RATE_LIMIT_BURST: '100000' } } });
try {
  const s = await devSignIn(sys.gateway.url, `bench.${process.pid}@contacts.bench`, 'Bench');
  const client = api(sys.gateway.url, s.token);
  const pid = sys.services.find((h) => h.name === 'contacts').process.pid;

  async function timedImport(rows) {
    const before = rssKiB(pid);
    let peak = before;
    const sampler = setInterval(() => (peak = Math.max(peak, rssKiB(pid))), 25);
    const t0 = performance.now();
    const res = await client.post('/api/contacts/import', { rows });
    const ms = performance.now() - t0;
    clearInterval(sampler);
    if (res.status !== 200) throw new Error(`import: ${res.status} ${JSON.stringify(res.body)}`);
    return { ms, before, peak, body: res.body };
  }

  const first = await timedImport(rowsFrom(ROWS, 0));
  console.log(
    `import of ${ROWS.toLocaleString('en-US')} new rows: ${(first.ms / 1000).toFixed(2)} s (created ${first.body.created}); contacts RSS ${mib(first.before)} → peak ${mib(first.peak)} MiB`,
  );
  const again = await timedImport(rowsFrom(ROWS, 0));
  console.log(
    `the same ${ROWS.toLocaleString('en-US')} rows again (all updates): ${(again.ms / 1000).toFixed(2)} s (updated ${again.body.updated}); peak RSS ${mib(again.peak)} MiB`,
  );
  for (let from = ROWS; from < TOTAL; from += ROWS) await timedImport(rowsFrom(Math.min(ROWS, TOTAL - from), from));

  const segment = (
    await client.post('/api/segments', {
      name: 'VIP in Sha Tin',
      rule: { tags: { anyOf: ['vip'] }, fields: [{ key: 'district', op: 'equals', value: 'Sha Tin' }] },
    })
  ).body.id;
  const followUp = (
    await client.post('/api/segments', {
      name: 'Not messaged',
      rule: { tags: { noneOf: ['vip'] }, facts: [{ fact: 'notMessagedForDays', days: 30 }] },
    })
  ).body.id;
  const queries = {
    'page (no filter)': () => '/api/contacts?limit=50',
    'number digits': (i) => `/api/contacts?q=${50_000_000 + ((i * 7919) % TOTAL)}`,
    name: (i) => `/api/contacts?q=${encodeURIComponent(`Customer ${(i * 104729) % TOTAL}`)}`,
    'field value': (i) => `/api/contacts?q=${encodeURIComponent(`HK-${100000 + ((i * 31) % TOTAL)}`)}`,
    'tag filter': () => '/api/contacts?tag=vip&limit=50',
    'segment count (tags + field)': () => `/api/segments/${segment}/count`,
    'segment count (none of + facts)': () => `/api/segments/${followUp}/count`,
  };
  const total = (await client.get('/api/contacts?limit=1')).body.total;
  console.log(`book size: ${total.toLocaleString('en-US')} contacts; ${SAMPLES} requests each, one at a time`);
  for (const [name, path] of Object.entries(queries)) {
    await client.get(path(0));
    const times = [];
    for (let i = 0; i < SAMPLES; i++) {
      const t0 = performance.now();
      const res = await client.get(path(i));
      times.push(performance.now() - t0);
      if (res.status !== 200) throw new Error(`${name}: ${res.status}`);
    }
    times.sort((a, b) => a - b);
    console.log(`  ${name.padEnd(32)} p50 ${pct(times, 50).toFixed(1)} ms  p99 ${pct(times, 99).toFixed(1)} ms`);
  }
} finally {
  await sys.stop();
}
