import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { NatsConnection, Subscription } from '@nats-io/transport-node';
import type { RetentionPage } from '@bns/contracts';
import { connectNats, RpcClient, SERVICE_ENV, RETENTION_CLOCK } from '@bns/service-kit';
import { startNats, type Nats } from '@bns/testing';
import { inProcess, type InProcess } from '../../__tests__/in-process.js';
import { RetentionPurge } from '../retention-purge.service.js';
import { RetentionRepository } from '../retention.repository.js';

const DAY = 86_400_000;

/**
 * The read model's retention purge on a real Postgres, the settings answered over real NATS on the
 * integrations subject, at a set clock: old text and replies go, rows, totals and monthly usage stay.
 */
describe('retention purge of the dashboard read model', () => {
  let nats: Nats;
  let nc: NatsConnection;
  let responder: Subscription;
  let ip: InProcess;
  const now = new Date('2026-09-01T12:00:00Z');
  const settings: RetentionPage['settings'] = [
    { userId: 'u_month', days: 30 },
    { userId: 'u_keep', days: null },
  ];

  beforeAll(async () => {
    nats = await startNats();
    nc = await connectNats(nats.url, 'dashboard-retention-spec');
    responder = nc.subscribe('integrations.account.retention.page', {
      callback: (_err, msg) => {
        const { id } = msg.json<{ id: string }>();
        msg.respond(
          JSON.stringify({ id, response: { settings, next: null } satisfies RetentionPage, isDisposed: true }),
        );
      },
    });
    ip = await inProcess([
      { provide: RpcClient, useValue: new RpcClient(nc, { shards: 1, timeoutMs: 2000 }) },
      { provide: RETENTION_CLOCK, useValue: { now: () => now } },
      { provide: SERVICE_ENV, useValue: { RETENTION_PURGE_EVERY_MS: 0 } },
      RetentionRepository,
      RetentionPurge,
    ]);
  }, 120_000);

  afterAll(async () => {
    await ip?.stop();
    responder?.unsubscribe();
    await nc?.close();
    await nats?.stop();
  });

  let seq = 0;
  async function sent(userId: string, daysAgo: number): Promise<string> {
    const at = new Date(now.getTime() - daysAgo * DAY);
    const [{ id }] = await ip.db.query(
      `INSERT INTO dashboard.messages (user_id, idempotency_key, job_id, recipient, content, status, outcome, created_at, sent_at, reply, replied_at)
       VALUES ($1, $2, 'job', '91234567', 'Hello Ann', 'read', 'sent', $3, $3, 'Thanks!', $3) RETURNING id::text AS id`,
      [userId, `k${++seq}`, at],
    );
    await ip.db.query(
      `INSERT INTO dashboard.inbound_messages (user_id, message_id, from_number, text, received_at) VALUES ($1, $2, '91234567', 'Thanks!', $3)`,
      [userId, `in${seq}`, at],
    );
    return id as string;
  }
  const message = async (id: string) =>
    (await ip.db.query(`SELECT content, reply, status FROM dashboard.messages WHERE id = $1::bigint`, [id]))[0];
  const inbound = async (userId: string) =>
    Number(
      (await ip.db.query(`SELECT count(*) AS n FROM dashboard.inbound_messages WHERE user_id = $1`, [userId]))[0].n,
    );

  it("removes text and replies past each user's period; keeps rows, newer text and counts", async () => {
    const monthOld = await sent('u_month', 31);
    const monthNew = await sent('u_month', 29);
    const defaultOld = await sent('u_default', 366);
    const keepOld = await sent('u_keep', 1000);
    await ip.db.query(
      `INSERT INTO dashboard.monthly_usage (user_id, month, sent_count, failed_count) VALUES ('u_month', '2026-07-01', 2, 0)`,
    );

    expect(await ip.module.get(RetentionPurge).run()).toEqual({ messages: 2, replies: 2 });
    expect(await message(monthOld)).toEqual({ content: '', reply: null, status: 'read' });
    expect(await message(defaultOld)).toEqual({ content: '', reply: null, status: 'read' });
    expect(await message(monthNew)).toEqual({ content: 'Hello Ann', reply: 'Thanks!', status: 'read' });
    expect(await message(keepOld)).toEqual({ content: 'Hello Ann', reply: 'Thanks!', status: 'read' });
    expect(await inbound('u_month')).toBe(1);
    expect(await inbound('u_keep')).toBe(1);
    const [usage] = await ip.db.query(`SELECT sent_count FROM dashboard.monthly_usage WHERE user_id = 'u_month'`);
    expect(Number(usage.sent_count)).toBe(2);
    expect(await ip.module.get(RetentionPurge).run()).toEqual({ messages: 0, replies: 0 });
  });
});
