import { RECEIPT_RANK, type Receipt } from './send.entity.js';

/** How many messages' furthest receipts a process keeps: the acks of a message come within minutes of its send. */
export const RECEIPTS_REMEMBERED = 20_000;

/**
 * The furthest receipt this process published for each of the messages it sent most recently, so a
 * repeated or older ack (a second delivered, delivered after read, an error ack after delivered) makes
 * no event. Kept in memory, not on the send's ledger row: writing it there cost two row versions per
 * message (delivered, then read) for a rule every reader keeps anyway. Those readers are the durable
 * guard: the jobs report sets each receipt time once and keeps a delivered message from becoming
 * refused, the dashboard moves a status forward only, webhooks deliver each event id once and
 * JetStream stores an event id once within its duplicate window. So an ack this memory no longer
 * holds (a restart, a message older than the last RECEIPTS_REMEMBERED) is published again and changes
 * nothing downstream.
 */
export class FurthestReceipts {
  private readonly ranks = new Map<string, number>();

  /** Whether `to` is further than `from` (a receipt only moves forward). */
  static moves(from: Receipt, to: Receipt): boolean {
    return RECEIPT_RANK[to] > RECEIPT_RANK[from];
  }

  constructor(private readonly capacity = RECEIPTS_REMEMBERED) {}

  /** Whether `receipt` moves the message `key` forward from what was published. */
  isNews(key: string, receipt: Receipt): boolean {
    const rank = this.ranks.get(key);
    return rank === undefined || RECEIPT_RANK[receipt] > rank;
  }

  /** `receipt` was published for `key`: the most recent entry, the oldest forgotten past the capacity. */
  remember(key: string, receipt: Receipt): void {
    const rank = Math.max(RECEIPT_RANK[receipt], this.ranks.get(key) ?? 0);
    this.ranks.delete(key);
    this.ranks.set(key, rank);
    for (const oldest of this.ranks.keys()) {
      if (this.ranks.size <= this.capacity) break;
      this.ranks.delete(oldest);
    }
  }

  get size(): number {
    return this.ranks.size;
  }
}
