import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Transactions } from '@bns/service-kit';
import { SendsRepository } from '../sends.repository.js';
import { startHarness, type Harness } from './harness.js';

/** Accounts sending at once, and messages each: their rows interleave on the table's pages, as in a campaign. */
const ACCOUNTS = 40;
const MESSAGES = 50;
/** A message text of a usual length: the row's new versions need room of about its size. */
const TEXT = 'Hi Ann, your parcel 4711 is ready for pickup at our Causeway Bay shop until Friday 7 pm.';

describe('sent messages (real Postgres): receipts are written in place', () => {
  let h: Harness;
  let sends: SendsRepository;

  beforeAll(async () => {
    h = await startHarness([SendsRepository]);
    sends = h.get(SendsRepository);
  }, 60_000);

  afterAll(async () => {
    await h?.stop();
  });

  /** The page each send's row is on now, by its key. */
  async function pages(): Promise<Map<string, string>> {
    const found = await h.db.query<{ k: string; page: string }>(
      `SELECT user_id || '/' || idempotency_key AS k, (ctid::text::point)[0]::text AS page FROM sessions.sends`,
    );
    return new Map(found.map((r) => [r.k, r.page]));
  }

  it('a delivered and a read receipt leave a sent row on its page (HOT: no new index entries)', async () => {
    const all: { userId: string; key: string; messageId: string }[] = [];
    // Claimed and marked sent round by round, every account one message per round, as lanes step.
    for (let m = 0; m < MESSAGES; m++) {
      const round = Array.from({ length: ACCOUNTS }, (_, a) => ({
        userId: `user_in_place_${a}`,
        key: `job:00000000-0000-4000-8000-${String(a).padStart(12, '0')}:${m}`,
        messageId: `wamid.${a}.${m}`,
      }));
      await Promise.all(round.map((s) => sends.claim(s.userId, s.key, 'job', `852${60000000 + m}`, TEXT)));
      await Promise.all(round.map((s) => sends.markSent(s.userId, s.key, s.messageId, new Date())));
      all.push(...round);
    }
    const sentOn = await pages();
    expect(sentOn.size).toBe(ACCOUNTS * MESSAGES);
    const tx = h.get(Transactions);
    for (const receipt of ['delivered', 'read'] as const) {
      // Receipts come back in batches of a few accounts' messages, as the phones answer.
      for (let i = 0; i < all.length; i += 25) {
        const batch = all.slice(i, i + 25).map((s) => ({ userId: s.userId, idempotencyKey: s.key, receipt }));
        await tx.run((em) => sends.setReceipts(em, batch));
      }
    }
    const after = await pages();
    const moved = [...after].filter(([k, page]) => sentOn.get(k) !== page).length;
    // Measured: 2.5% of the rows moved with room kept on the pages; 43% with the pages packed full.
    expect(moved / all.length).toBeLessThanOrEqual(0.08);
    const stored = await h.db.query<{ receipt: string; n: string }>(
      'SELECT receipt, count(*) AS n FROM sessions.sends GROUP BY receipt',
    );
    expect(stored.map((r) => [r.receipt, Number(r.n)])).toEqual([['read', ACCOUNTS * MESSAGES]]);
  }, 120_000);
});
