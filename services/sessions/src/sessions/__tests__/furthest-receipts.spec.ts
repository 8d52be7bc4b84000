import { describe, expect, it } from '@jest/globals';
import { FurthestReceipts } from '../furthest-receipts.js';

describe('FurthestReceipts: what a process published of each recent message', () => {
  it('counts a receipt as news only when it moves the message forward', () => {
    const r = new FurthestReceipts();
    expect(r.isNews('m1', 'delivered')).toBe(true);
    r.remember('m1', 'delivered');
    expect(r.isNews('m1', 'delivered')).toBe(false);
    expect(r.isNews('m1', 'failed')).toBe(false);
    expect(r.isNews('m1', 'read')).toBe(true);
    r.remember('m1', 'read');
    expect(r.isNews('m1', 'delivered')).toBe(false);
    // Remembering an older receipt never moves a message back.
    r.remember('m1', 'delivered');
    expect(r.isNews('m1', 'read')).toBe(false);
    expect(FurthestReceipts.moves('delivered', 'read')).toBe(true);
    expect(FurthestReceipts.moves('read', 'delivered')).toBe(false);
    expect(FurthestReceipts.moves('delivered', 'failed')).toBe(false);
  });

  it('keeps the most recently published messages up to its capacity, forgetting the oldest first', () => {
    const r = new FurthestReceipts(3);
    for (const m of ['a', 'b', 'c']) r.remember(m, 'delivered');
    r.remember('a', 'read'); // a is now the most recent
    r.remember('d', 'delivered'); // b, the oldest, goes
    expect(r.size).toBe(3);
    expect(r.isNews('b', 'delivered')).toBe(true);
    expect(r.isNews('a', 'read')).toBe(false);
    expect(r.isNews('c', 'delivered')).toBe(false);
    expect(r.isNews('d', 'delivered')).toBe(false);
  });
});
