import { Inject, Injectable } from '@nestjs/common';
import {
  addDays,
  formatLocal,
  gateAt,
  localTime,
  nextWindowOpening,
  PACING_LOG,
  unansweredCounts,
  zonedInstant,
  type PausedReason,
  type SendingPolicy,
} from '@bns/contracts';
import { SERVICE_ENV } from '@bns/service-kit';
import { backoffStepsMs, type JobsEnv } from '../config/env.js';
import type { LaneCounters } from './lane.repository.js';

/**
 * The gates of an account's sending: the back-off after WhatsApp pushed back, the sending window and
 * the daily cap with warm-up, judged at a lane's slot. Pure over the policy, the lane's counters and
 * the time; the take asks before it sends, the finish when it backs off.
 */
@Injectable()
export class LaneGate {
  constructor(@Inject(SERVICE_ENV) private readonly env: JobsEnv) {}

  /** The first gate that keeps the account from sending at `now`, with when it opens and the log line saying so. */
  closedGate(
    policy: SendingPolicy,
    lane: LaneCounters,
    now: Date,
  ): { reason: PausedReason; resumesAt: Date; log: string } | undefined {
    const backoffUntil = this.backoffUntil(lane);
    if (backoffUntil && backoffUntil > now) {
      return {
        reason: 'rate_limited',
        resumesAt: backoffUntil,
        log: PACING_LOG.rateLimited(
          Math.ceil((backoffUntil.getTime() - now.getTime()) / 60_000),
          formatLocal(backoffUntil, policy.timeZone),
        ),
      };
    }
    const gate = gateAt(policy, now, lane);
    if (gate.open) return this.unansweredGate(policy, lane, now);
    const at = formatLocal(gate.resumesAt, policy.timeZone);
    return {
      reason: gate.reason,
      resumesAt: gate.resumesAt,
      log: gate.reason === 'daily_cap' ? PACING_LOG.dailyCapReached(gate.cap ?? 0, at) : PACING_LOG.windowClosed(at),
    };
  }

  /**
   * The unanswered limit: at it, the account waits. Its count changes when a day leaves the 30 (at
   * local midnight) or a number replies, so the gate is judged again at the next midnight (within the
   * sending hours); a reply before then shows at that check.
   */
  private unansweredGate(
    policy: SendingPolicy,
    lane: LaneCounters,
    now: Date,
  ): { reason: PausedReason; resumesAt: Date; log: string } | undefined {
    const limit = policy.unansweredLimit ?? null;
    if (limit === null) return undefined;
    const today = localTime(now, policy.timeZone).date;
    const { last30Days } = unansweredCounts(lane.unanswered, today);
    if (last30Days < limit) return undefined;
    const resumesAt = nextWindowOpening(policy, zonedInstant(addDays(today, 1), 0, policy.timeZone));
    return {
      reason: 'unanswered',
      resumesAt,
      log: PACING_LOG.unansweredLimitReached(last30Days, limit, formatLocal(resumesAt, policy.timeZone)),
    };
  }

  backoffUntil(lane: Pick<LaneCounters, 'backoffLevel' | 'backoffAt'>): Date | undefined {
    if (lane.backoffLevel < 1 || !lane.backoffAt) return undefined;
    const steps = backoffStepsMs(this.env);
    return new Date(lane.backoffAt.getTime() + steps[Math.min(lane.backoffLevel, steps.length) - 1]!);
  }
}
