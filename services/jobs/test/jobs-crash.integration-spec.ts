import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { jetstream } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import pg from 'pg';
import { EVENTS_STREAM, type MessageStatusEvent } from '@bns/contracts';
import { sleep, startSystem, waitFor, type ServiceHandle, type System } from '@bns/testing';
import { isFinished, jobOf, numbers, outboxOf, signInLinked, startJob, waitForJob, type User } from './helpers.js';

const RECIPIENTS = 200;
const KILLS = 5;
// Slow enough that the five kills land while it sends (200 × 75 ms ≥ 15 s), whatever the machine's speed.
const JOBS_ENV = { SEND_DELAY_MS: '75', JOBS_HEARTBEAT_MS: '200', JOBS_WORKER_STALE_MS: '1000', JOBS_POLL_MS: '100' };

/** Every `events.message.status` of one job that JetStream stored (after its msg-id dedupe). */
async function storedStatusEvents(nc: NatsConnection, jobId: string): Promise<MessageStatusEvent[]> {
  // nats-server 2.9 (Debian's) has no multi-subject filters: read everything, keep one subject.
  const consumer = await jetstream(nc).consumers.get(EVENTS_STREAM);
  const events: MessageStatusEvent[] = [];
  const messages = await consumer.fetch({ max_messages: 100_000, expires: 2000 });
  for await (const m of messages) {
    if (m.subject === 'events.message.status') {
      const e = m.json<MessageStatusEvent>();
      if (e.jobId === jobId) events.push(e);
    }
    if (m.info.pending === 0) break;
  }
  return events;
}

describe('crash safety: kill -9 the jobs service mid-job, again and again', () => {
  let sys: System;
  let ann: User;
  let nc: NatsConnection;
  const resumedLines: string[] = [];
  const jobsHandles: ServiceHandle[] = [];

  beforeAll(async () => {
    sys = await startSystem({
      shards: 2,
      env: { SIM_QR_INTERVAL_MS: '5000', SIM_READY_DELAY_MS: '50' },
      serviceEnv: { jobs: JOBS_ENV },
      onLine: (label, line) => {
        if (label === 'jobs' && line.includes('left in flight by a dead worker')) resumedLines.push(line);
      },
    });
    ann = await signInLinked(sys.gateway.url, 'ann-crash@example.com');
    nc = await connect({ servers: sys.nats.url });
  }, 180_000);

  afterAll(async () => {
    ann?.tab.close();
    await nc?.close();
    await Promise.all(jobsHandles.map((h) => h.stop()));
    await sys?.stop();
  });

  it(`a ${RECIPIENTS}-recipient job survives ${KILLS} kill -9s: completes, and every recipient got exactly one message`, async () => {
    const phones = numbers(RECIPIENTS, 66_000_000);
    const jobId = await startJob(ann, {
      message: 'Hello {{name}}',
      recipients: phones.map((phone, i) => ({ phone, variables: { name: `#${i + 1}` } })),
    });

    let jobs = sys.services.find((h) => h.name === 'jobs')!;
    const sentAtKill: number[] = [];
    for (let k = 0; k < KILLS; k++) {
      await sleep(300 + Math.floor(Math.random() * 900));
      await jobs.kill9();
      sentAtKill.push((await outboxOf(ann, jobId)).length);
      jobs = await sys.start('jobs');
      jobsHandles.push(jobs);
    }
    // The kills landed while the job was still sending, not after it finished.
    expect(sentAtKill.at(-1)).toBeLessThan(RECIPIENTS);

    const done = await waitForJob(ann, jobId, isFinished, 120_000);
    expect(done.status).toBe('completed');
    expect(done.progress).toEqual({ total: RECIPIENTS, sent: RECIPIENTS, failed: 0 });
    expect(done.results.successList).toHaveLength(RECIPIENTS);
    expect(new Set(done.results.successList.map((s) => s.originalNumber)).size).toBe(RECIPIENTS);

    const outbox = await outboxOf(ann, jobId);
    expect(outbox).toHaveLength(RECIPIENTS);
    expect(outbox.map((m) => m.to).sort()).toEqual(phones);
    for (const m of outbox) expect(m.text).toBe(`Hello #${phones.indexOf(m.to) + 1}`);

    // Each result was reported, once: events a killed process committed but did not publish are
    // swept from the outbox, and a republish carries the same event id, which JetStream dedupes.
    const sent = await waitFor(
      async () => {
        const events = (await storedStatusEvents(nc, jobId)).filter((e) => e.status === 'sent');
        return events.length >= RECIPIENTS ? events : undefined;
      },
      20_000,
      500,
      'every sent event',
    );
    expect(sent).toHaveLength(RECIPIENTS);
    expect(new Set(sent.map((e) => e.recipient)).size).toBe(RECIPIENTS);

    const final = await jobOf(ann, jobId);
    expect(final.progress.sent).toBe(RECIPIENTS);
    process.stdout.write(
      `crash test: outbox sizes at the kills ${sentAtKill.join(', ')}; sends left in flight and resolved by key: ${resumedLines.length}\n`,
    );
  }, 240_000);

  it('a recipient left `sending` by a dead worker is resolved by its key: sent → only recorded, never sent → sent now', async () => {
    const phones = numbers(100, 68_000_000);
    const jobId = await startJob(ann, { message: 'In flight', phoneNumbers: phones });
    await waitForJob(ann, jobId, (j) => j.progress.sent >= 2, 15_000, 'two sent');
    await jobsHandles.at(-1)!.kill9();
    jobsHandles.pop();
    const before = resumedLines.length;
    // What a crash between "marked in flight" and "recorded" leaves: one recipient whose message went out
    // but was not recorded, and one marked but never sent — marked the way a replica of the earlier
    // version did (state 'sending'), as a rolling upgrade would find it.
    const db = new pg.Client({ connectionString: sys.postgres.url });
    await db.connect();
    try {
      await db.query('BEGIN');
      const sent = await db.query(
        `UPDATE jobs.job_recipients SET state = 'pending', in_flight = true, done_at = NULL
          WHERE job_id = $1 AND seq = (SELECT max(seq) FROM jobs.job_recipients WHERE job_id = $1 AND state = 'sent') RETURNING phone`,
        [jobId],
      );
      await db.query(`UPDATE jobs.jobs SET sent = sent - 1 WHERE id = $1`, [jobId]);
      const unsent = await db.query(
        `UPDATE jobs.job_recipients SET state = 'sending'
          WHERE job_id = $1 AND seq = (SELECT min(seq) FROM jobs.job_recipients WHERE job_id = $1 AND state = 'pending' AND NOT in_flight) RETURNING phone`,
        [jobId],
      );
      await db.query('COMMIT');
      expect(sent.rowCount).toBe(1);
      expect(unsent.rowCount).toBe(1);
    } finally {
      await db.end();
      jobsHandles.push(await sys.start('jobs'));
    }

    const done = await waitForJob(ann, jobId, isFinished, 30_000);
    expect(done.progress).toEqual({ total: 100, sent: 100, failed: 0 });
    const outbox = await outboxOf(ann, jobId);
    expect(outbox.map((m) => m.to).sort()).toEqual(phones);
    expect(resumedLines.length - before).toBeGreaterThanOrEqual(1);
  }, 60_000);

  it('two replicas share the accounts; when one dies the other takes its accounts over, pacing intact', async () => {
    const second = await sys.start('jobs', {}, 'jobs-b');
    jobsHandles.push(second);
    const first = jobsHandles.at(-2)!;
    const users = [
      ann,
      ...(await Promise.all([1, 2, 3].map((i) => signInLinked(sys.gateway.url, `replica-${i}@example.com`)))),
    ];
    try {
      const perJob = 40;
      const jobIds = await Promise.all(
        users.map((u, i) =>
          startJob(u, { message: `Replica ${i}`, phoneNumbers: numbers(perJob, 67_000_000 + i * 1000) }),
        ),
      );
      await sleep(400);
      // Kill the replica that holds the most of these accounts right now.
      const db = new pg.Client({ connectionString: sys.postgres.url });
      await db.connect();
      const { rows } = await db.query<{ holder: string; n: number }>(
        `SELECT holder, count(*)::int AS n FROM jobs.lanes WHERE holder IS NOT NULL AND user_id = ANY($1) GROUP BY holder ORDER BY n DESC`,
        [users.map((u) => u.userId)],
      );
      await db.end();
      const busiest = [first, second].find((h) => rows[0]?.holder.includes(`:${h.process.pid}:`));
      expect(busiest).toBeDefined();
      await busiest!.kill9();
      const done = await Promise.all(users.map((u, i) => waitForJob(u, jobIds[i]!, isFinished, 60_000)));
      expect(done.map((j) => j.progress)).toEqual(users.map(() => ({ total: perJob, sent: perJob, failed: 0 })));
      for (const [i, u] of users.entries()) {
        const times = (await outboxOf(u, jobIds[i]!)).map((m) => Date.parse(m.at));
        expect(times).toHaveLength(perJob);
        // One account never sends two messages at once, whichever replica sends for it.
        const gaps = times.slice(1).map((t, k) => t - times[k]!);
        expect(Math.min(...gaps)).toBeGreaterThanOrEqual(Number(JOBS_ENV.SEND_DELAY_MS));
      }
    } finally {
      for (const u of users.slice(1)) u.tab.close();
    }
  }, 120_000);
});
