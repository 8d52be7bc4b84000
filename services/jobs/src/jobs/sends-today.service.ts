import { Injectable } from '@nestjs/common';
import { dailyCapOn, localTime, unansweredCounts, type SendsToday } from '@bns/contracts';
import { Transactions } from '@bns/service-kit';
import { LaneRepository } from '../queue/lane.repository.js';
import { Policies } from '../policy/policy.service.js';

/**
 * The account's sends today against today's daily cap, and its messages to numbers that never replied
 * (this month, the last 30 days, against the policy's limit), as the lane counts them for the cap: the day is
 * the policy's time zone's, the cap is lowered during warm-up. Read without a lock (a send may land
 * while this answers).
 */
@Injectable()
export class SendsTodayService {
  constructor(
    private readonly tx: Transactions,
    private readonly policies: Policies,
    private readonly lanes: LaneRepository,
  ) {}

  async of(userId: string, now: Date = new Date()): Promise<SendsToday> {
    const [policy, counters] = await Promise.all([
      this.policies.of(this.tx.manager, userId),
      this.lanes.counters(this.tx.manager, userId),
    ]);
    const date = localTime(now, policy.timeZone).date;
    const sent = counters?.dayKey === date ? counters.dayCount : 0;
    const cap = dailyCapOn(policy, date, counters?.warmUpFrom ?? null);
    return {
      date,
      timeZone: policy.timeZone,
      sent,
      cap,
      remaining: cap === null ? null : Math.max(0, cap - sent),
      unanswered: { ...unansweredCounts(counters?.unanswered, date), limit: policy.unansweredLimit ?? null },
    };
  }
}
