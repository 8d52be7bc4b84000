// The fault suite: the whole system as spawned processes (simulated WhatsApp, two tenants on different
// sessions shards, two jobs replicas), one fault per scenario while both tenants' jobs are sending:
// kill -9 of each service in turn, a NATS restart, a short Postgres restart and a 15 s Postgres outage;
// then a sessions shard stopped (SIGSTOP) past the jobs service's timeout while its job is cancelled.
// Each scenario asserts what a tenant would notice — the job completes, every recipient got exactly one
// message, no delivered/read receipt is missing from the dashboard — and prints recovery figures.
// Run it with `npm run test:chaos` (after a build); `npm test` runs it as one of its steps.
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { io } from 'socket.io-client';
import { LIMITS, shardOf, SOCKET, SOCKET_CLIENT_EVENTS, SOCKET_EVENTS } from '@bns/contracts';
import { api, devSignIn, revalidationsAnswered, simulatorOutbox, simulatorScan, sleep, waitFor } from '@bns/testing';
import { FaultSystem, isReady } from '../../libs/testing/dist/faults.js';
import { ROOT } from '../lib.mjs';

const RECIPIENTS = Number(process.env.CHAOS_RECIPIENTS ?? 30);
const SEND_DELAY_MS = 150;
/** Longest a jobs lane may wait for another replica to take it over after a kill -9 of the replica sending for an account. */
const TAKEOVER_GOAL_MS = 5000;
/** Longest from NATS being back to the next message sent. */
const NATS_STALL_GOAL_MS = 3000;
const LONG_PG_OUTAGE_MS = 15_000;
const SHORT_PG_OUTAGE_MS = 2000;
/** After a job ends, how long its last receipts may take to reach the dashboard before they count as lost. */
const RECEIPTS_SETTLE_MS = 10_000;

const ENV = {
  LOG_LEVEL: 'warn',
  SEND_DELAY_MS: String(SEND_DELAY_MS),
  SIM_QR_INTERVAL_MS: '5000',
  SIM_READY_DELAY_MS: '50',
  SIM_DELIVERED_DELAY_MS: '100',
  SIM_READ_DELAY_MS: '300',
  // A dashboard killed with events in flight gets them again after this (default 10 s): keeps the run short.
  DASHBOARD_ACK_WAIT_MS: '3000',
  // The fault tests must not be throttled by their own polling.
  RATE_LIMIT_PER_SECOND: '1000',
  RATE_LIMIT_BURST: '1000',
};

const figures = [];
const fmt = (ms) => (ms === undefined || ms === null || Number.isNaN(ms) ? '—' : `${(ms / 1000).toFixed(2)} s`);

let sys;
let db;
/** Two tenants, side by side, one on each sessions shard. */
const tenants = [];
/** A third tenant with one job scheduled far ahead: nothing of theirs changes, so no event of theirs comes. */
let watcher;
let watchedJob;

/** Signs in (again: a restarted gateway may have a new dev key) and keeps the token on the tenant. */
async function signIn(tenant) {
  const s = await devSignIn(sys.gatewayUrl, tenant.email);
  tenant.userId = s.userId;
  tenant.token = s.token;
}

/**
 * An API call as the tenant, as a careful client makes it: one fresh sign-in when the token is refused
 * (after a gateway restart), and a 503 (a service still coming back, or the gateway shedding load on a
 * busy machine) asked again after its Retry-After, for up to 30 s.
 */
async function call(tenant, method, path, body) {
  const until = Date.now() + 30_000;
  for (;;) {
    let res = await api(sys.gatewayUrl, tenant.token)[method](path, body);
    if (res.status === 401) {
      await signIn(tenant);
      res = await api(sys.gatewayUrl, tenant.token)[method](path, body);
    }
    if (res.status !== 503 || Date.now() > until) return res;
    await sleep(Math.min(5000, 1000 * Number(res.headers?.get?.('retry-after') ?? 1) || 1000));
  }
}

async function link(tenant) {
  const socket = io(sys.gatewayUrl, {
    path: SOCKET.path,
    transports: [...SOCKET.transports],
    auth: { token: tenant.token },
    reconnection: false,
    forceNew: true,
  });
  try {
    await new Promise((resolve, reject) => {
      socket.once('connect', resolve);
      socket.once('connect_error', reject);
    });
    const ready = new Promise((resolve) => socket.once(SOCKET_EVENTS.ready, resolve));
    socket.emit(SOCKET_CLIENT_EVENTS.createSession, {
      id: tenant.userId,
      clerkUserId: tenant.userId,
      isExplicitRequest: true,
    });
    await simulatorScan(sys.gatewayUrl, tenant.token);
    await Promise.race([
      ready,
      sleep(15_000).then(() => Promise.reject(new Error(`${tenant.email} never became ready`))),
    ]);
  } finally {
    socket.close();
  }
}

/** A tenant whose user id lands on the given sessions shard (the dev issuer derives it from the e-mail). */
async function tenantOnShard(shard, name) {
  for (let i = 0; i < 200; i++) {
    const tenant = { email: `chaos-${name}-${i}@example.com` };
    await signIn(tenant);
    if (shardOf(tenant.userId, 2) === shard) return { ...tenant, name, shard };
  }
  throw new Error(`no e-mail lands on shard ${shard}`);
}

/** One revalidation of the watcher's job with its ETag: the status, and who answered it. */
async function revalidateWatched() {
  const before = await revalidationsAnswered(sys.handle('gateway').metricsUrl);
  const res = await fetch(`${sys.gatewayUrl}/job-status/${watchedJob.jobId}`, {
    headers: { authorization: `Bearer ${watcher.token}`, 'if-none-match': watchedJob.etag },
  });
  await res.arrayBuffer();
  const after = await revalidationsAnswered(sys.handle('gateway').metricsUrl);
  return {
    status: res.status,
    by: after.memory > before.memory ? 'memory' : after.jobs > before.jobs ? 'jobs' : 'neither',
  };
}

let numberBase = 61_000_000;
function phones() {
  numberBase += 1000;
  return Array.from({ length: RECIPIENTS }, (_, i) => String(numberBase + i));
}

async function startJob(tenant, recipients, label) {
  const res = await call(tenant, 'post', '/start-bulk-messages', {
    clerkUserId: tenant.userId,
    message: `${label} {{name}}`,
    recipients: recipients.map((phone, i) => ({ phone, variables: { name: `#${i + 1}` } })),
  });
  assert.equal(res.status, 200, `start: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.jobId;
}

/** When each message of a job reached the simulated phone (epoch ms, in order), straight from the sessions schema. */
async function sendTimes(jobId) {
  const { rows } = await db.query(
    `SELECT (extract(epoch FROM sent_at) * 1000)::float8 AS t FROM sessions.sim_outbox WHERE idempotency_key LIKE $1 ORDER BY sent_at`,
    [`${jobId}:%`],
  );
  return rows.map((r) => r.t);
}

async function sentSoFar(jobId) {
  const { rows } = await db.query(`SELECT count(*)::int AS n FROM sessions.sim_outbox WHERE idempotency_key LIKE $1`, [
    `${jobId}:%`,
  ]);
  return rows[0].n;
}

async function receiptsOf(jobId) {
  const { rows } = await db.query(
    `SELECT status, count(*)::int AS n FROM dashboard.messages WHERE job_id = $1 GROUP BY status`,
    [jobId],
  );
  return Object.fromEntries(rows.map((r) => [r.status, r.n]));
}

async function jobOf(tenant, jobId) {
  const res = await call(tenant, 'get', `/job-status/${jobId}`);
  if (res.status !== 200) throw new Error(`job-status: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.job;
}

const finished = (job) => ['completed', 'failed', 'cancelled'].includes(job.status);

/** The first send at or after `t`, minus `t` (ms); undefined when none came after. */
const firstAfter = (times, t) => {
  const next = times.find((x) => x >= t);
  return next === undefined ? undefined : next - t;
};

/** The longest pause between two sends of one job (ms). */
const longestGap = (times) => times.slice(1).reduce((m, t, i) => Math.max(m, t - times[i]), 0);

/**
 * Runs both tenants' jobs, injects the fault once tenant A's job is a few messages in, and collects what
 * the assertions and the figures need. `fault` answers {at, backAt?, readyMs?, note?}.
 */
async function runScenario(name, fault) {
  await sys.waitAllReady(90_000);
  const lists = tenants.map(() => phones());
  const jobIds = [];
  for (const [i, t] of tenants.entries()) jobIds.push(await startJob(t, lists[i], name));
  await waitFor(async () => (await sentSoFar(jobIds[0])) >= 4, 30_000, 20, `${name}: the first sends`);
  const injected = await fault();

  const jobs = [];
  for (const [i, t] of tenants.entries())
    jobs.push(
      await waitFor(
        async () => ((j) => (finished(j) ? j : undefined))(await jobOf(t, jobIds[i])),
        120_000,
        250,
        `${name}: ${t.name}'s job to end`,
      ),
    );
  const endedAt = Date.now();

  const outboxes = [];
  for (const [i, t] of tenants.entries()) {
    const all = await waitFor(
      () =>
        simulatorOutbox(sys.gatewayUrl, t.token).catch(async () => {
          await signIn(t).catch(() => undefined);
          return undefined;
        }),
      20_000,
      250,
      'the simulator outbox',
    );
    outboxes.push(all.filter((m) => m.idempotencyKey.startsWith(`${jobIds[i]}:`)));
  }

  // Receipts: every sent message must end `read` in the read model (read implies its delivered came or was overtaken).
  const receipts = [];
  const deadline = endedAt + RECEIPTS_SETTLE_MS;
  for (const jobId of jobIds) {
    let r = await receiptsOf(jobId);
    while ((r.read ?? 0) < RECIPIENTS && Date.now() < deadline) {
      await sleep(250);
      r = await receiptsOf(jobId);
    }
    receipts.push(r);
  }

  const times = await Promise.all(jobIds.map(sendTimes));
  const result = {
    name,
    jobs,
    lists,
    outboxes,
    receipts,
    lost: receipts.map((r) => RECIPIENTS - (r.read ?? 0)),
    nextSendMs: times.map((ts) => firstAfter(ts, injected.at)),
    afterBackMs: injected.backAt === undefined ? undefined : times.map((ts) => firstAfter(ts, injected.backAt)),
    gapMs: times.map(longestGap),
    ...injected,
  };
  figures.push(result);
  process.stdout.write(
    `  [fault] ${name}: next send after the fault A ${fmt(result.nextSendMs[0])} / B ${fmt(result.nextSendMs[1])}` +
      (result.afterBackMs
        ? `; after it was back A ${fmt(result.afterBackMs[0])} / B ${fmt(result.afterBackMs[1])}`
        : '') +
      `; longest pause A ${fmt(result.gapMs[0])} / B ${fmt(result.gapMs[1])}` +
      (result.readyMs === undefined ? '' : `; ready again after ${fmt(result.readyMs)}`) +
      `; receipts lost A ${result.lost[0]} / B ${result.lost[1]} of ${RECIPIENTS} each` +
      (result.note ? `; ${result.note}` : '') +
      '\n',
  );
  return result;
}

/** kill -9, then start it again at once (as a Deployment would); readyMs is kill → its /readyz 200. */
async function killAndRestart(label) {
  const at = await sys.kill9(label);
  await sys.restart(label);
  await waitFor(() => isReady(sys.urlOf(label)), 60_000, 50, `${label} ready`);
  return { at, readyMs: Date.now() - at };
}

/** The same assertions for every scenario. */
function scenario(name, fault, extra) {
  describe(name, () => {
    let r;
    before(async () => {
      r = await runScenario(name, fault);
    });
    it('both jobs complete with every recipient sent', () => {
      for (const job of r.jobs) {
        assert.equal(job.status, 'completed', `job ${job.jobId} ended ${job.status}: ${job.error ?? ''}`);
        assert.deepEqual(job.progress, { total: RECIPIENTS, sent: RECIPIENTS, failed: 0 });
      }
    });
    it("every recipient got exactly one message, with its own text, in the simulator's outbox", () => {
      for (const [i, outbox] of r.outboxes.entries()) {
        assert.deepEqual(outbox.map((m) => m.to).sort(), [...r.lists[i]].sort(), `tenant ${tenants[i].name}`);
        for (const m of outbox) assert.equal(m.text, `${name} #${r.lists[i].indexOf(m.to) + 1}`);
      }
    });
    it('no delivered/read receipt is lost: every message ends read in the dashboard', () => {
      assert.deepEqual(
        r.lost,
        [0, 0],
        `receipts lost per tenant (of ${RECIPIENTS}): ${r.lost.join(', ')}; statuses ${JSON.stringify(r.receipts)}`,
      );
    });
    for (const e of [extra ?? []].flat()) it(e.title, () => e.check(r));
  });
}

describe(
  'fault suite: every message exactly once, no receipt lost, through kill -9 and restarts',
  { timeout: 600_000 },
  () => {
    before(async () => {
      try {
        await setUp();
      } catch (err) {
        // Printed at once: the runner reports a failed hook only at its very end.
        console.error('fault suite: setting up failed:', err);
        throw err;
      }
    });

    async function setUp() {
      sys = await FaultSystem.start({ shards: 2, jobsReplicas: 2, env: ENV });
      db = new pg.Pool({ connectionString: sys.postgres.url, max: 2 });
      // A query on a pool whose server went away errors on the idle client; the pool drops it and reconnects.
      db.on('error', () => undefined);
      tenants.push(await tenantOnShard(0, 'a'), await tenantOnShard(1, 'b'));
      for (const t of tenants) await link(t);
      watcher = await tenantOnShard(0, 'watcher');
      await link(watcher);
      const started = await call(watcher, 'post', '/start-bulk-messages', {
        clerkUserId: watcher.userId,
        message: 'later',
        phoneNumbers: ['61999001'],
        startAt: new Date(Date.now() + 3_600_000).toISOString(),
      });
      assert.equal(started.status, 200, JSON.stringify(started.body));
      watchedJob = { jobId: started.body.jobId };
    }

    after(async () => {
      await db?.end().catch(() => undefined);
      await sys?.stop();
      printFigures();
    });

    scenario('kill -9 gateway', async () => {
      const r = await killAndRestart('gateway');
      // Reported, not asserted here: a restarted gateway's dev issuer may have a new key, so signing in again is allowed.
      const kept = (await api(sys.gatewayUrl, tenants[0].token).get('/api/jobs/pacing')).status === 200;
      return { ...r, note: `dev tokens ${kept ? 'still valid' : 'refused (signed in again)'} after the restart` };
    });

    scenario('kill -9 sessions shard', () => killAndRestart(`sessions-${tenants[0].shard}`));

    scenario(
      'kill -9 jobs',
      async () => {
        // Kill the replica sending for tenant A right now; the other one must take the lane over.
        const { rows } = await db.query(`SELECT holder FROM jobs.lanes WHERE user_id = $1`, [tenants[0].userId]);
        const holder = rows[0]?.holder ?? '';
        const label = ['jobs-a', 'jobs-b'].find((l) => holder.includes(`:${sys.handle(l).process.pid}:`));
        assert.ok(label, `no live jobs replica holds tenant A's lane (holder ${holder})`);
        const r = await killAndRestart(label);
        return { ...r, note: `killed ${label}` };
      },
      {
        title: `the surviving jobs replica takes the lane over within ${TAKEOVER_GOAL_MS / 1000} s`,
        check: (r) =>
          assert.ok(
            r.nextSendMs[0] !== undefined && r.nextSendMs[0] <= TAKEOVER_GOAL_MS,
            `takeover took ${fmt(r.nextSendMs[0])}`,
          ),
      },
    );

    scenario('kill -9 templates', () => killAndRestart('templates'));

    scenario('kill -9 dashboard', () => killAndRestart('dashboard'));

    scenario(
      'NATS restart',
      async () => {
        // The watcher's job version, learned by the gateway from the jobs service's answer, then answered from its memory.
        await signIn(watcher);
        const plain = await fetch(`${sys.gatewayUrl}/job-status/${watchedJob.jobId}`, {
          headers: { authorization: `Bearer ${watcher.token}` },
        });
        await plain.arrayBuffer();
        watchedJob.etag = plain.headers.get('etag');
        const learned = await revalidateWatched();
        const at = Date.now();
        await sys.nats.down();
        await sys.nats.up();
        const backAt = Date.now();
        await waitFor(() => isReady(sys.gatewayUrl), 60_000, 50, 'the gateway ready after NATS');
        return { at, backAt, readyMs: Date.now() - at, cache: { learned, afterRestart: await revalidateWatched() } };
      },
      [
        {
          title: `sending resumes within ${NATS_STALL_GOAL_MS / 1000} s of NATS being back`,
          check: (r) => {
            for (const ms of r.afterBackMs)
              assert.ok(
                ms !== undefined && ms <= NATS_STALL_GOAL_MS,
                `stall after the NATS restart: ${r.afterBackMs.map(fmt).join(' / ')}`,
              );
          },
        },
        {
          title:
            'the gateway forgets the job-status versions it knew (events may have been missed): the first revalidation after the restart asks the jobs service',
          check: (r) => {
            assert.deepEqual(r.cache.learned, { status: 304, by: 'memory' });
            assert.deepEqual(r.cache.afterRestart, { status: 304, by: 'jobs' });
          },
        },
      ],
    );

    const pgOutage = (ms) => async () => {
      const at = Date.now();
      await sys.postgres.down();
      await sleep(ms);
      await sys.postgres.up();
      const backAt = Date.now();
      await waitFor(() => isReady(sys.gatewayUrl), 60_000, 50, 'the gateway ready after Postgres');
      return { at, backAt, readyMs: Date.now() - at, note: `Postgres down ${fmt(backAt - at)}` };
    };
    scenario(`Postgres restart (${SHORT_PG_OUTAGE_MS / 1000} s)`, pgOutage(SHORT_PG_OUTAGE_MS));
    scenario(`Postgres outage (${LONG_PG_OUTAGE_MS / 1000} s)`, pgOutage(LONG_PG_OUTAGE_MS));

    describe("a sessions shard stalled (SIGSTOP) past the jobs service's timeout", () => {
      let r;
      before(async () => {
        await sys.waitAllReady(90_000);
        const t = tenants[0];
        const jobId = await startJob(t, phones(), 'stalled shard');
        const recorded = async () => (await db.query(`SELECT sent FROM jobs.jobs WHERE id = $1`, [jobId])).rows[0].sent;
        await waitFor(async () => (await recorded()) >= 4, 30_000, 20, 'the first sends');
        // Stopped right after a send was recorded, so no send is half done inside it: the next one
        // (SEND_DELAY_MS later) is asked of the stopped shard and waits in its socket.
        const before = await recorded();
        await waitFor(async () => (await recorded()) > before, 10_000, 2, 'the next send recorded');
        const pid = sys.handle(`sessions-${t.shard}`).process.pid;
        process.kill(pid, 'SIGSTOP');
        let cancelled;
        try {
          await sleep(2 * SEND_DELAY_MS);
          cancelled = await call(t, 'post', `/cancel-job/${jobId}`);
          // The jobs service gives up on the waiting send (RPC_TIMEOUT_MS, 10 s) and more than the grace passes.
          await sleep(10_000 + LIMITS.rpcDeadlineGraceMs + 1000);
        } finally {
          process.kill(pid, 'SIGCONT');
        }
        await sleep(3000);
        r = { cancelled, job: await jobOf(t, jobId), delivered: await sentSoFar(jobId) };
      });
      it('the send the cancelled job stopped waiting for is not made when the shard wakes: the phone got exactly what the job counts', () => {
        assert.equal(r.cancelled.status, 200, JSON.stringify(r.cancelled.body));
        assert.equal(r.job.status, 'cancelled');
        assert.equal(
          r.delivered,
          r.job.progress.sent,
          `the phone got ${r.delivered} messages, the job counts ${r.job.progress.sent} sent`,
        );
      });
    });
  },
);

function printFigures() {
  const lines = [
    '',
    `── fault suite figures (2 tenants × ${RECIPIENTS} recipients, SEND_DELAY_MS ${SEND_DELAY_MS}) ──`,
    'scenario                     next send A / B      after back A / B    ready     longest pause   receipts lost',
  ];
  for (const f of figures) {
    lines.push(
      [
        f.name.padEnd(28),
        `${fmt(f.nextSendMs[0])} / ${fmt(f.nextSendMs[1])}`.padEnd(20),
        (f.afterBackMs ? `${fmt(f.afterBackMs[0])} / ${fmt(f.afterBackMs[1])}` : '—').padEnd(19),
        fmt(f.readyMs).padEnd(9),
        fmt(Math.max(...f.gapMs)).padEnd(15),
        `${f.lost[0] + f.lost[1]} of ${2 * RECIPIENTS}`,
      ].join(' '),
    );
  }
  const jobs = figures.find((f) => f.name === 'kill -9 jobs');
  const nats = figures.find((f) => f.name === 'NATS restart');
  if (jobs)
    lines.push(`jobs lane takeover after kill -9: ${fmt(jobs.nextSendMs[0])} (goal ≤ ${TAKEOVER_GOAL_MS / 1000} s)`);
  if (nats)
    lines.push(
      `stall after a NATS restart: ${nats.afterBackMs.map(fmt).join(' / ')} (goal ≤ ${NATS_STALL_GOAL_MS / 1000} s)`,
    );
  lines.push(`receipts lost in total: ${figures.reduce((n, f) => n + f.lost[0] + f.lost[1], 0)} (goal 0)`, '');
  process.stdout.write(lines.join('\n'));
  const dir = join(ROOT, 'test-output');
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    join(dir, 'chaos-figures.json'),
    JSON.stringify(
      figures.map(({ name, nextSendMs, afterBackMs, readyMs, gapMs, lost, receipts, note }) => ({
        name,
        nextSendMs,
        afterBackMs,
        readyMs,
        gapMs,
        lost,
        receipts,
        note,
      })),
      null,
      2,
    ),
  );
}
