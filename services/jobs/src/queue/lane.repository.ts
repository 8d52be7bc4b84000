import { Injectable } from '@nestjs/common';
import type { EntityManager, QueryPartialEntity } from 'typeorm';
import { row, rows } from '@bns/service-kit';
import type { SendingPolicy } from '@bns/contracts';
import { policyColumnsSql, storedPolicyOf } from '../jobs/policy.repository.js';
import { laneJobColumnsSql, laneJobOf, nextWorkableJobSql, recordOutcomeCtes, recordOutcomeParams, type LaneJob } from '../jobs/jobs.repository.js';
import { LaneEntity } from './lane.entity.js';

/** The lane as its step sees it, locked: holder, time to its slot, and the policy's counters. */
export type LockedLane = Pick<LaneEntity, 'holder' | 'dayKey' | 'dayCount' | 'runCount' | 'warmUpFrom' | 'engineFailures' | 'backoffLevel' | 'backoffAt'> & {
  waitMs: number;
  /** The account's stored sending policy, read with the lock; undefined when it never set one. */
  policy: SendingPolicy | undefined;
};
export type LaneCounters = Pick<LaneEntity, 'dayKey' | 'dayCount' | 'runCount' | 'warmUpFrom' | 'engineFailures' | 'backoffLevel' | 'backoffAt'>;
const COUNTERS = `day_key AS "dayKey", day_count AS "dayCount", run_count AS "runCount", warm_up_from AS "warmUpFrom",
  engine_failures AS "engineFailures", backoff_level AS "backoffLevel", backoff_at AS "backoffAt"`;

/** A lane handed to a worker, with how long until its next send. */
export interface LaneDue {
  userId: string;
  dueInMs: number;
}

const secs = (ms: number) => ms / 1000;

/** Where a send's outcome puts the lane's next slot (see `LaneRepository.reschedule`). */
export interface LaneSlot {
  notBeforeMs: number;
  exactly?: Date;
  floor?: Date;
}
export interface Rescheduled {
  nextSendAt: Date;
  waitMs: number;
}

/**
 * `reschedule`'s UPDATE with its parameters from `$first` (see `rescheduleParams`); the slot's
 * `exactly`/`floor` and the counters apply only where `appliedSql` holds.
 */
function rescheduleSql(first: number, appliedSql: string): string {
  const p = (i: number) => `$${first + i}`;
  const when = (i: number, type = '') => (appliedSql === 'true' ? `${p(i)}${type}` : `CASE WHEN ${appliedSql} THEN ${p(i)}${type} END`);
  return `UPDATE lanes SET updated_at = now(),
            (next_send_at, paced_at) = (
              SELECT slot, slot FROM (
                SELECT CASE WHEN ${when(3, '::timestamptz')} IS NOT NULL THEN least(next_send_at, greatest(now(), ${p(3)}::timestamptz))
                            ELSE greatest(next_send_at, now() + make_interval(secs => ${p(2)}), coalesce(${when(4, '::timestamptz')}, '-infinity')) END AS slot) s),
            day_key = CASE WHEN ${when(5, '::boolean')} THEN ${p(6)} ELSE day_key END,
            day_count = coalesce(${when(7, '::integer')}, day_count),
            run_count = coalesce(${when(8, '::integer')}, run_count),
            warm_up_from = CASE WHEN ${when(5, '::boolean')} THEN ${p(9)} ELSE warm_up_from END,
            engine_failures = coalesce(${when(10, '::integer')}, engine_failures)
      WHERE user_id = ${p(0)} AND holder = ${p(1)}
    RETURNING next_send_at AS "nextSendAt", greatest(0, extract(epoch FROM next_send_at - clock_timestamp()) * 1000)::float8 AS "waitMs"`;
}

function rescheduleParams(userId: string, workerId: string, slot: LaneSlot, counters?: Partial<LaneCounters>): unknown[] {
  const c = counters ?? {};
  return [
    userId,
    workerId,
    secs(slot.notBeforeMs),
    slot.exactly ?? null,
    slot.floor ?? null,
    c.dayKey !== undefined,
    c.dayKey ?? null,
    c.dayCount ?? null,
    c.runCount ?? null,
    c.warmUpFrom ?? null,
    c.engineFailures ?? null,
  ];
}

/**
 * Books the lane's next slot `paceSecsSql` seconds after this one (taken ahead of it, or now when it
 * is past), as an UPDATE another statement may run in a CTE (the take books in the same round trip);
 * `whereSql` adds a condition.
 */
export function bookLaneSql(userIdSql: string, paceSecsSql: string, whereSql = 'true'): string {
  return `UPDATE lanes SET updated_at = now(),
            (next_send_at, paced_at) = (SELECT slot, slot FROM (SELECT greatest(next_send_at, clock_timestamp()) + make_interval(secs => ${paceSecsSql}) AS slot) s)
      WHERE user_id = ${userIdSql} AND ${whereSql}`;
}

/**
 * Every statement on `jobs.lanes`. Times are the database's clock, so replicas with skewed clocks
 * still pace one account alike.
 */
@Injectable()
export class LaneRepository {
  /**
   * The user has new work, due at `startAt` (now when absent): the lane exists and is active. A lane
   * nobody holds that sleeps past that (until a later scheduled start, or a window or cap, which its
   * next step judges again) is brought forward to it, but never before its paced slot. A start takes
   * this row lock first, so it serialises with the worker's "no more work" decision.
   */
  async activate(em: EntityManager, userId: string, startAt?: Date | null): Promise<void> {
    await rows(
      em,
      `INSERT INTO lanes (user_id) VALUES ($1)
       ON CONFLICT (user_id) DO UPDATE SET active = true, updated_at = now(),
         next_send_at = CASE WHEN lanes.holder IS NULL
                             THEN least(lanes.next_send_at, greatest(lanes.paced_at, coalesce($2::timestamptz, now())))
                             ELSE lanes.next_send_at END`,
      [userId, startAt ?? null],
    );
  }

  /**
   * Takes up to `limit` active lanes with work due within `lookaheadMs` that no live worker holds
   * (the holder missing from `workers` or silent for `staleMs`), or only `userId`'s lane whenever due.
   */
  async claim(em: EntityManager, workerId: string, limit: number, lookaheadMs: number, staleMs: number, userId?: string): Promise<LaneDue[]> {
    return rows<LaneDue>(
      em,
      `UPDATE lanes l SET holder = $1, updated_at = now()
         FROM (SELECT c.user_id FROM lanes c
                WHERE c.active
                  AND ($5::text IS NULL AND c.next_send_at <= now() + make_interval(secs => $3) OR c.user_id = $5)
                  AND c.holder IS DISTINCT FROM $1
                  AND (c.holder IS NULL OR NOT EXISTS (
                        SELECT 1 FROM workers w WHERE w.id = c.holder AND w.seen_at > now() - make_interval(secs => $4)))
                ORDER BY c.next_send_at
                LIMIT $2
                FOR UPDATE SKIP LOCKED) AS free
        WHERE l.user_id = free.user_id
      RETURNING l.user_id AS "userId", greatest(0, extract(epoch FROM l.next_send_at - clock_timestamp()) * 1000)::float8 AS "dueInMs"`,
      [workerId, limit, secs(lookaheadMs), secs(staleMs), userId ?? null],
    );
  }

  /** Active lanes the database says `workerId` holds. */
  held(em: EntityManager, workerId: string): Promise<LaneDue[]> {
    return rows<LaneDue>(
      em,
      `SELECT user_id AS "userId", greatest(0, extract(epoch FROM next_send_at - clock_timestamp()) * 1000)::float8 AS "dueInMs"
         FROM lanes WHERE holder = $1 AND active`,
      [workerId],
    );
  }

  /**
   * Locks the lane for the caller's transaction: who holds it, how long until its next slot (negative
   * when past), its counters, the account's stored policy, and the user's next workable job, locked
   * too (lane first, then job, as every step does) — all in one statement, one round trip.
   */
  async lock(em: EntityManager, userId: string): Promise<(LockedLane & { job: LaneJob | undefined }) | undefined> {
    const found = await row<LockedLane & Record<string, unknown>>(
      em,
      `WITH l AS (SELECT * FROM lanes WHERE user_id = $1 FOR NO KEY UPDATE)
       SELECT l.holder, (extract(epoch FROM l.next_send_at - clock_timestamp()) * 1000)::float8 AS "waitMs", ${COUNTERS},
              ${policyColumnsSql('p')}, ${laneJobColumnsSql('j')}
         FROM l LEFT JOIN policies p ON p.user_id = l.user_id
         LEFT JOIN LATERAL (${nextWorkableJobSql('l.user_id')}) j ON true`,
      [userId],
    );
    if (!found) return undefined;
    const { holder, waitMs, dayKey, dayCount, runCount, warmUpFrom, engineFailures, backoffLevel, backoffAt } = found;
    return { holder, waitMs, dayKey, dayCount, runCount, warmUpFrom, engineFailures, backoffLevel, backoffAt, policy: storedPolicyOf(found), job: laneJobOf(found) };
  }

  /** The counters without a lock (estimates); undefined for an account that never sent. */
  counters(em: EntityManager, userId: string): Promise<LaneCounters | undefined> {
    return row<LaneCounters>(em, `SELECT ${COUNTERS} FROM lanes WHERE user_id = $1`, [userId]);
  }

  async setCounters(em: EntityManager, userId: string, counters: QueryPartialEntity<LaneEntity>): Promise<void> {
    await em.createQueryBuilder().update(LaneEntity).set(counters).where('user_id = :userId', { userId }).execute();
  }

  /**
   * Nothing to send before `until` (a closed window, a reached cap, a back-off, a scheduled start): the
   * lane is handed back, still active, and whichever worker polls first takes it when it is due.
   */
  async sleep(em: EntityManager, userId: string, until: Date): Promise<void> {
    await em
      .createQueryBuilder()
      .update(LaneEntity)
      .set({ holder: null, active: true, nextSendAt: until, updatedAt: () => 'now()' })
      .where('user_id = :userId', { userId })
      .execute();
  }

  /**
   * Something changed that may let the account send sooner (a resume, a new policy): the lane is active
   * again and, unless a worker holds it (then its own step reads the change), due now or at its paced
   * slot if that is later (a resume right after a send keeps the gap). That is `activate` for work due now.
   */
  wake(em: EntityManager, userId: string): Promise<void> {
    return this.activate(em, userId);
  }

  /** No more work: the lane rests and nobody holds it, until a start activates it again. */
  async deactivate(em: EntityManager, userId: string): Promise<void> {
    await em
      .createQueryBuilder()
      .update(LaneEntity)
      .set({ active: false, holder: null, updatedAt: () => 'now()' })
      .where('user_id = :userId', { userId })
      .execute();
  }

  /**
   * After a send's outcome, the lane's next slot: with `exactly`, that time (a duplicate: nothing left
   * now, so only the gap to the earlier send counts; never in the past, never later than booked);
   * otherwise the latest of what was booked, now + `notBeforeMs` (retries and pauses) and `floor` (the
   * real send time plus the pace); the paced slot too, so a later sleep does not lose it. Undefined
   * when `workerId` no longer holds the lane.
   */
  reschedule(
    em: EntityManager,
    userId: string,
    workerId: string,
    slot: LaneSlot,
    counters?: Partial<LaneCounters>,
  ): Promise<Rescheduled | undefined> {
    return row(em, rescheduleSql(1, 'true'), rescheduleParams(userId, workerId, slot, counters));
  }

  /**
   * A message sent, recorded (`JobsRepository.recordOutcome`) and the lane rescheduled, in one
   * statement: `slot` and `counters` apply only when the outcome did (the recipient was still
   * `sending`); otherwise the lane is rescheduled as after nothing. `job` is undefined when the
   * outcome did not apply, `lane` when `workerId` no longer holds it.
   */
  async recordAndReschedule(
    em: EntityManager,
    send: { jobId: string; seq: number; userId: string },
    outcome: { kind: 'sent'; at: Date; pacedMs: number },
    workerId: string,
    slot: LaneSlot,
    counters?: Partial<LaneCounters>,
  ): Promise<{ job: LaneJob | undefined; lane: Rescheduled | undefined }> {
    const found = await row<Record<string, unknown>>(
      em,
      `WITH ${recordOutcomeCtes(outcome.kind)},
            lane AS (${rescheduleSql(6, 'EXISTS (SELECT 1 FROM counted)')})
       SELECT ${laneJobColumnsSql('counted')}, lane."nextSendAt" AS "lane_nextSendAt", lane."waitMs" AS "lane_waitMs"
         FROM (SELECT 1) one LEFT JOIN counted ON true LEFT JOIN lane ON true`,
      [...recordOutcomeParams(send.jobId, send.seq, outcome), ...rescheduleParams(send.userId, workerId, slot, counters)],
    );
    const lane = found?.lane_nextSendAt ? { nextSendAt: found.lane_nextSendAt as Date, waitMs: found.lane_waitMs as number } : undefined;
    return { job: found ? laneJobOf(found) : undefined, lane };
  }

  /** Graceful stop: the worker's lanes are handed back at once rather than after the stale time. */
  async release(em: EntityManager, workerId: string): Promise<void> {
    await em
      .createQueryBuilder()
      .update(LaneEntity)
      .set({ holder: null, updatedAt: () => 'now()' })
      .where('holder = :workerId', { workerId })
      .execute();
  }
}
