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
 * The inbox's retention purge on a real Postgres, the settings answered over real NATS on the
 * integrations subject, at a clock the test sets: old messages go, newer ones and the contacts stay.
 */
describe('retention purge of conversation messages', () => {
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
    nc = await connectNats(nats.url, 'contacts-retention-spec');
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
  async function message(userId: string, phone: string, daysAgo: number): Promise<string> {
    const at = new Date(now.getTime() - daysAgo * DAY);
    const [{ id }] = await ip.db.query(
      `INSERT INTO contacts.messages (user_id, phone, direction, key, text, at) VALUES ($1, $2, 'in', $3, 'a reply', $4) RETURNING id::text AS id`,
      [userId, phone, `k${++seq}`, at],
    );
    await ip.db.query(
      `INSERT INTO contacts.conversations (user_id, phone, last_direction, last_text, last_at) VALUES ($1, $2, 'in', 'a reply', $3)
       ON CONFLICT (user_id, phone) DO UPDATE SET last_at = greatest(contacts.conversations.last_at, EXCLUDED.last_at)`,
      [userId, phone, at],
    );
    return id as string;
  }
  const exists = async (id: string) =>
    (await ip.db.query(`SELECT 1 FROM contacts.messages WHERE id = $1::bigint`, [id])).length === 1;
  const lastText = async (userId: string, phone: string) =>
    (
      await ip.db.query(`SELECT last_text FROM contacts.conversations WHERE user_id = $1 AND phone = $2`, [
        userId,
        phone,
      ])
    )[0].last_text as string;

  it("removes messages past each user's period and blanks conversations that old; keeps the rest", async () => {
    const monthOld = await message('u_month', '91000001', 31);
    const monthNew = await message('u_month', '91000002', 29);
    const defaultOld = await message('u_default', '91000003', 366);
    const defaultNew = await message('u_default', '91000004', 300);
    const keepOld = await message('u_keep', '91000005', 1000);
    await ip.db.query(`INSERT INTO contacts.contacts (user_id, phone, source) VALUES ('u_month', '91000001', 'reply')`);

    expect(await ip.module.get(RetentionPurge).run()).toEqual({ messages: 2, conversations: 2 });
    expect(await exists(monthOld)).toBe(false);
    expect(await exists(defaultOld)).toBe(false);
    for (const id of [monthNew, defaultNew, keepOld]) expect(await exists(id)).toBe(true);
    expect(await lastText('u_month', '91000001')).toBe('');
    expect(await lastText('u_month', '91000002')).toBe('a reply');
    expect(await lastText('u_keep', '91000005')).toBe('a reply');
    expect((await ip.module.get(RetentionPurge).run()).messages).toBe(0);
    // The contact itself is no message detail: it stays.
    expect((await ip.db.query(`SELECT 1 FROM contacts.contacts WHERE user_id = 'u_month'`)).length).toBe(1);
  });
});
