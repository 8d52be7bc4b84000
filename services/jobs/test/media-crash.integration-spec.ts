import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { mediaFiles, sleep, startSystem, type ServiceHandle, type System } from '@bns/testing';
import { isFinished, numbers, outboxOf, signInLinked, startJob, waitForJob, type User } from './helpers.js';

const RECIPIENTS = 120;
// Slow enough that both kills land while it sends (120 × 100 ms ≥ 12 s), whatever the machine's speed.
const JOBS_ENV = { SEND_DELAY_MS: '100', JOBS_HEARTBEAT_MS: '200', JOBS_WORKER_STALE_MS: '1000', JOBS_POLL_MS: '100' };

/**
 * A campaign with an attachment through kill -9 of the jobs service and of the tenant's sessions shard
 * (each started again at once, as Kubernetes would): every recipient gets the file exactly once, with
 * its caption, and every message on the phone carries the same file.
 */
describe('crash safety with an attachment: kill -9 jobs and the sessions shard mid-campaign', () => {
  let sys: System;
  let ann: User;
  const started: ServiceHandle[] = [];

  beforeAll(async () => {
    sys = await startSystem({
      services: ['jobs', 'sessions'],
      shards: 1,
      env: { SIM_QR_INTERVAL_MS: '5000', SIM_READY_DELAY_MS: '50' },
      serviceEnv: { jobs: JOBS_ENV },
    });
    ann = await signInLinked(sys.gateway.url, 'ann-media-crash@example.com');
  }, 180_000);

  afterAll(async () => {
    ann?.tab.close();
    await Promise.all(started.map((h) => h.stop()));
    await sys?.stop();
  });

  it(`a ${RECIPIENTS}-recipient campaign with a PDF: each recipient gets it once`, async () => {
    const bytes = mediaFiles.pdf('BT (Price list) Tj ET');
    const form = new FormData();
    form.append('file', new Blob([new Uint8Array(bytes)]), 'prices.pdf');
    const res = await fetch(`${sys.gateway.url}/api/media`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ann.token}` },
      body: form,
    });
    expect(res.status).toBe(201);
    const media = (await res.json()) as { mediaId: string; sha256: string; size: number };

    const phones = numbers(RECIPIENTS, 67_000_000);
    const jobId = await startJob(ann, { message: 'This week’s prices', phoneNumbers: phones, mediaId: media.mediaId });
    const sentAtKill: number[] = [];
    // Straight from the sessions schema: the shard that serves the outbox may be the one just killed.
    const onPhone = async () => {
      const db = new pg.Client({ connectionString: sys.postgres.url });
      await db.connect();
      try {
        const found = await db.query(
          `SELECT count(*)::int AS n FROM sessions.sim_outbox WHERE idempotency_key LIKE $1`,
          [`${jobId}:%`],
        );
        return (found.rows[0] as { n: number }).n;
      } finally {
        await db.end();
      }
    };

    await waitForJob(ann, jobId, (j) => j.progress.sent >= 5, 30_000, 'the first sends');
    await sys.services.find((h) => h.name === 'jobs')!.kill9();
    sentAtKill.push(await onPhone());
    started.push(await sys.start('jobs'));

    await sleep(800 + Math.floor(Math.random() * 800));
    const shard = sys.services.find((h) => h.label === 'sessions-0')!;
    await shard.kill9();
    sentAtKill.push(await onPhone());
    started.push(await sys.start('sessions', { SHARD_INDEX: '0' }, 'sessions-0-restarted'));
    // Both kills landed while the campaign was still sending.
    expect(sentAtKill.at(-1)).toBeLessThan(RECIPIENTS);

    const done = await waitForJob(ann, jobId, isFinished, 150_000);
    expect(done.status).toBe('completed');
    expect(done.progress).toEqual({ total: RECIPIENTS, sent: RECIPIENTS, failed: 0 });

    const outbox = await outboxOf(ann, jobId);
    expect(outbox).toHaveLength(RECIPIENTS);
    expect(outbox.map((m) => m.to).sort()).toEqual(phones);
    for (const m of outbox) {
      expect(m.text).toBe('This week’s prices');
      expect(m.media).toEqual({ kind: 'document', sha256: media.sha256, size: media.size, fileName: 'prices.pdf' });
    }
    process.stdout.write(`media crash test: outbox sizes at the kills ${sentAtKill.join(', ')}\n`);
  }, 300_000);
});
