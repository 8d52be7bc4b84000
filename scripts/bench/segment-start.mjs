#!/usr/bin/env node
// A campaign to a segment of the contact book: `contacts` contacts imported (not measured), a segment of
// them saved (a tag and a field condition), then POST /start-bulk-messages with its segmentId and a
// personalised message ({{name|customer}}, {{district}}), timed to the 200 (the segment read, opt-outs and
// not-on-WhatsApp numbers removed, every recipient stored). Printed with the contacts and jobs services'
// RSS before and at their peak, and the job's recipient count read back. Sending is slowed right down.
//   flock /tmp/bench.lock node scripts/bench/segment-start.mjs [contacts=50000] [runs=3]
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { io } from 'socket.io-client';
import { SOCKET } from '@bns/contracts';
import { api, devSignIn, simulatorScan, startSystem } from '@bns/testing';
import { useNode24 } from '../runtime.mjs';

await useNode24();

const N = Number(process.argv[2] ?? 50_000);
const RUNS = Number(process.argv[3] ?? 3);
const DISTRICTS = ['Central', 'Wan Chai', 'Sha Tin', 'Tsuen Wan'];
const load = () =>
  loadavg()
    .map((l) => l.toFixed(1))
    .join(' ');
const rssKiB = (pid) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? NaN);
const mib = (kib) => (kib / 1024).toFixed(1);

console.log(`${cpus().length} cores, load average ${load()}`);
const sys = await startSystem({
  services: ['contacts', 'jobs', 'sessions'],
  shards: 1,
  startTimeoutMs: 400_000,
  env: { LOG_LEVEL: 'warn', SIM_READY_DELAY_MS: '0' },
  serviceEnv: {
    gateway: { RATE_LIMIT_PER_SECOND: '100000', RATE_LIMIT_BURST: '100000' },
    jobs: { SEND_DELAY_MS: '600000', JOBS_MAX_QUEUED_RECIPIENTS_PER_USER: '1000000' },
  },
});
const pidOf = (name) => sys.services.find((h) => h.name === name).process.pid;
try {
  const session = await devSignIn(sys.gateway.url, `segment.${process.pid}@bench.example`, 'Bench');
  const client = api(sys.gateway.url, session.token);
  // Linked through the socket, as the web does.
  const socket = io(sys.gateway.url, {
    path: SOCKET.path,
    transports: [...SOCKET.transports],
    auth: { token: session.token },
    reconnection: false,
    forceNew: true,
  });
  const ready = new Promise((resolve) => socket.once('ready', resolve));
  socket.emit('createSession', { id: session.userId, clerkUserId: session.userId, isExplicitRequest: true });
  await simulatorScan(sys.gateway.url, session.token);
  await ready;
  socket.close();

  const rows = Array.from({ length: N + N / 10 }, (_, i) => ({
    phone: String(60_000_000 + i),
    name: i % 7 === 0 ? '' : `Customer ${i}`,
    fields: { district: DISTRICTS[i % DISTRICTS.length] },
    // Every contact but one in eleven is in the segment.
    tags: i < N ? ['launch'] : ['other'],
  }));
  for (let from = 0; from < rows.length; from += 100_000) {
    const res = await client.post('/api/contacts/import', { rows: rows.slice(from, from + 100_000) });
    if (res.status !== 200) throw new Error(`import: ${res.status} ${JSON.stringify(res.body).slice(0, 300)}`);
  }
  const segment = await client.post('/api/segments', {
    name: 'Launch',
    rule: { tags: { anyOf: ['launch'] }, fields: [{ key: 'district', op: 'contains', value: 'a' }] },
  });
  if (segment.status >= 300) throw new Error(`segment: ${segment.status} ${JSON.stringify(segment.body)}`);
  const segmentId = segment.body.id;
  const count = (await client.get(`/api/segments/${segmentId}/count`)).body.count;
  console.log(`book ${rows.length.toLocaleString('en-US')} contacts, segment ${count.toLocaleString('en-US')}`);

  const start = () =>
    client.post(
      '/start-bulk-messages',
      { clerkUserId: session.userId, segmentId, message: 'Hi {{name|customer}}, our {{district}} shop opens today' },
      { 'Idempotency-Key': randomUUID() },
    );
  const pids = { contacts: pidOf('contacts'), jobs: pidOf('jobs') };
  for (let run = 1; run <= RUNS; run++) {
    const before = { contacts: rssKiB(pids.contacts), jobs: rssKiB(pids.jobs) };
    const peak = { ...before };
    const timer = setInterval(() => {
      for (const k of Object.keys(pids)) peak[k] = Math.max(peak[k], rssKiB(pids[k]));
    }, 25);
    const load0 = load();
    const t0 = performance.now();
    const res = await start();
    const ms = performance.now() - t0;
    clearInterval(timer);
    if (res.status !== 200) throw new Error(`start: ${res.status} ${JSON.stringify(res.body).slice(0, 300)}`);
    const status = await client.get(`/job-status/${res.body.jobId}`);
    const total = status.body.job?.progress?.total ?? '?';
    console.log(
      `segment-start run ${run}: ${count.toLocaleString('en-US')}-contact segment accepted in ${ms.toFixed(0)} ms ` +
        `(job of ${total} recipients); RSS MiB contacts ${mib(before.contacts)} → ${mib(peak.contacts)}, ` +
        `jobs ${mib(before.jobs)} → ${mib(peak.jobs)}; load ${load0} → ${load()}`,
    );
    // The next run's start is not held behind this one's queued recipients.
    await client.post(`/cancel-job/${res.body.jobId}`, { clerkUserId: session.userId });
  }
} finally {
  await sys.stop();
}
