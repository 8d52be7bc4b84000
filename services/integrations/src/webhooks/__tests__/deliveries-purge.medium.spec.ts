import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { SERVICE_ENV } from '@bns/service-kit';
import { CLOCK, ManualClock } from '../../clock/clock.js';
import { inProcess, type InProcess } from '../../__tests__/in-process.js';
import { WebhookDeliveriesPurge } from '../deliveries-purge.js';
import { WebhooksRepository } from '../webhooks.repository.js';

const DAY = 86_400_000;

/** The webhook delivery log under each user's retention setting, against a real Postgres on a set clock. */
describe("webhook deliveries: kept for the user's retention", () => {
  let ip: InProcess;
  const clock = new ManualClock(new Date('2026-06-01T00:00:00Z'));
  let seq = 0;

  beforeAll(async () => {
    ip = await inProcess([
      WebhooksRepository,
      WebhookDeliveriesPurge,
      { provide: CLOCK, useValue: clock },
      { provide: SERVICE_ENV, useValue: { RETENTION_PURGE_EVERY_MS: DAY } },
    ]);
  }, 60_000);
  afterAll(async () => {
    await ip?.stop();
  });

  async function delivery(userId: string, daysAgo: number, status: 'succeeded' | 'failed' | 'pending') {
    const [{ id: endpoint }] = await ip.db.query(
      `INSERT INTO integrations.webhook_endpoints (user_id, url, events, secret) VALUES ($1, 'https://x.test/h', '{message.sent}', 's') RETURNING id`,
      [userId],
    );
    const at = new Date(clock.now().getTime() - daysAgo * DAY);
    const [{ id }] = await ip.db.query(
      `INSERT INTO integrations.webhook_deliveries (endpoint_id, user_id, event_id, webhook_id, event_type, payload, status, created_at, event_at)
       VALUES ($1, $2, $3, $3, 'message.sent', '{}', $4, $5, $5) RETURNING id`,
      [endpoint, userId, `e${++seq}`, status, at],
    );
    return id as string;
  }
  const exists = async (id: string) =>
    (await ip.db.query(`SELECT 1 FROM integrations.webhook_deliveries WHERE id = $1`, [id])).length === 1;

  it('removes finished deliveries past the period, keeps newer and pending ones and a "keep" user\'s', async () => {
    await ip.db.query(
      `INSERT INTO integrations.retention_settings (user_id, days, updated_at) VALUES ('u30', 30, now()), ('ukeep', NULL, now())`,
    );
    const old30 = await delivery('u30', 31, 'succeeded');
    const new30 = await delivery('u30', 29, 'failed');
    const pending = await delivery('u30', 100, 'pending');
    const oldDefault = await delivery('udefault', 366, 'failed');
    const newDefault = await delivery('udefault', 300, 'succeeded');
    const kept = await delivery('ukeep', 1000, 'succeeded');

    expect(await ip.module.get(WebhookDeliveriesPurge).run()).toBe(2);
    expect(await exists(old30)).toBe(false);
    expect(await exists(oldDefault)).toBe(false);
    for (const id of [new30, pending, newDefault, kept]) expect(await exists(id)).toBe(true);

    clock.advance(2 * DAY);
    expect(await ip.module.get(WebhookDeliveriesPurge).run()).toBe(1);
    expect(await exists(new30)).toBe(false);
  });
});
