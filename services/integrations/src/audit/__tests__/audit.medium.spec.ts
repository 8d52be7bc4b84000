import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { NatsConnection } from '@nats-io/transport-node';
import { ACCOUNT_LIMITS, type AuditRecordedEvent } from '@bns/contracts';
import { connectNats, ensureEventsStream, SERVICE_ENV, UserDeletions } from '@bns/service-kit';
import { startNats, type Nats } from '@bns/testing';
import { CLOCK, ManualClock } from '../../clock/clock.js';
import { inProcess, type InProcess } from '../../__tests__/in-process.js';
import { AuditRepository } from '../audit.repository.js';
import { AuditService } from '../audit.service.js';

const DAY = 86_400_000;

/** The audit log's own rules against a real Postgres, on a clock the test moves: a year's keeping, dedupe, no update. */
describe('audit log: kept a year, appended once, never changed', () => {
  let nats: Nats;
  let nc: NatsConnection;
  let ip: InProcess;
  let audit: AuditService;
  const clock = new ManualClock(new Date('2026-01-01T00:00:00Z'));
  let seq = 0;

  const entry = (userId: string, at: Date, eventId = `e${++seq}`): AuditRecordedEvent => ({
    eventId,
    userId,
    at: at.toISOString(),
    kind: 'policy.changed',
    actor: `${userId}@example.com`,
    address: '203.0.113.0/24',
  });

  beforeAll(async () => {
    nats = await startNats();
    nc = await connectNats(nats.url, 'audit-spec');
    await ensureEventsStream(nc);
    const deletions = await UserDeletions.open(nc);
    ip = await inProcess([
      AuditRepository,
      AuditService,
      { provide: UserDeletions, useValue: deletions },
      { provide: CLOCK, useValue: clock },
      { provide: SERVICE_ENV, useValue: { RETENTION_PURGE_EVERY_MS: DAY } },
    ]);
    audit = ip.module.get(AuditService);
  }, 60_000);

  afterAll(async () => {
    await ip?.stop();
    await nc?.close();
    await nats?.stop();
  });

  it('removes entries older than a year by the clock and keeps the newer ones', async () => {
    const start = clock.now();
    await audit.record(entry('u_old', start));
    await audit.record(entry('u_old', new Date(start.getTime() + 10 * DAY)));
    clock.advance(ACCOUNT_LIMITS.auditKeepDays * DAY + DAY);
    expect(await audit.purge()).toBe(1);
    const left = await audit.list({ userId: 'u_old', limit: 10 });
    expect(left.entries.map((e) => e.at)).toEqual([new Date(start.getTime() + 10 * DAY).toISOString()]);
    expect(await audit.purge()).toBe(0);
  });

  it('appends a redelivered event once, and refuses any UPDATE', async () => {
    const at = clock.now();
    await audit.record(entry('u_dup', at, 'same-event'));
    await audit.record(entry('u_dup', at, 'same-event'));
    expect((await audit.list({ userId: 'u_dup', limit: 10 })).entries).toHaveLength(1);
    await expect(ip.db.query(`UPDATE integrations.audit_log SET kind = 'x' WHERE user_id = 'u_dup'`)).rejects.toThrow(
      /append-only/,
    );
  });

  it('drops an entry of an account deleted after the action', async () => {
    const deletions = ip.module.get(UserDeletions);
    const at = clock.now();
    await deletions.put('u_gone', {
      deletionId: 'd1',
      requestedAtMs: at.getTime() + 1000,
      doneAtMs: at.getTime() + 2000,
    });
    await audit.record(entry('u_gone', at));
    expect((await audit.list({ userId: 'u_gone', limit: 10 })).entries).toHaveLength(0);
  });
});
