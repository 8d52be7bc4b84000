import { Injectable } from '@nestjs/common';
import type { EntityManager, QueryPartialEntity } from 'typeorm';
import { inInputOrder, row, rows } from '@bns/service-kit';
import type { SendingPolicy } from '@bns/contracts';
import { policyColumnsSql, storedPolicyOf } from '../policy/policy.repository.js';
import { laneJobColumnsSql, laneJobOf, nextWorkableJobSql, recordSentCtes, type LaneJob } from '../store/jobs.repository.js';
import { LaneEntity } from './lane.entity.js';
import { STEP_PREPARED } from './step-planning.js';

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

/** What `rescheduleSql` reads: each a parameter (`$n`) or a column of a batch's request rows. */
interface RescheduleValues {
  userId: string;
  workerId: string;
  notBeforeSecs: string;
  exactly: string;
  floor: string;
  setDay: string;
  dayKey: string;
  dayCount: string;
  runCount: string;
  warmUpFrom: string;
  engineFailures: string;
}
const RESCHEDULE_KEYS = ['userId', 'workerId', 'notBeforeSecs', 'exactly', 'floor', 'setDay', 'dayKey', 'dayCount', 'runCount', 'warmUpFrom', 'engineFailures'] as const;

/** `rescheduleParams` as $first, $first+1, …. */
const rescheduleAt = (first: number): RescheduleValues =>
  Object.fromEntries(RESCHEDULE_KEYS.map((k, i) => [k, `$${first + i}`])) as unknown as RescheduleValues;

/**
 * `reschedule`'s UPDATE: the slot's `exactly`/`floor` and the counters apply only where `appliedSql`
 * holds; `fromSql` and `returningSql` add a FROM item (a batch's request rows) and columns.
 */
function rescheduleSql(v: RescheduleValues, appliedSql: string, fromSql = '', returningSql = ''): string {
  const when = (value: string, type = '') => (appliedSql === 'true' ? `${value}${type}` : `CASE WHEN ${appliedSql} THEN ${value}${type} END`);
  return `UPDATE lanes SET updated_at = now(),
            (next_send_at, paced_at) = (
              SELECT slot, slot FROM (
                SELECT CASE WHEN ${when(v.exactly, '::timestamptz')} IS NOT NULL THEN least(next_send_at, greatest(now(), ${v.exactly}::timestamptz))
                            ELSE greatest(next_send_at, now() + make_interval(secs => ${v.notBeforeSecs}), coalesce(${when(v.floor, '::timestamptz')}, '-infinity')) END AS slot) s),
            day_key = CASE WHEN ${when(v.setDay, '::boolean')} THEN ${v.dayKey} ELSE day_key END,
            day_count = coalesce(${when(v.dayCount, '::integer')}, day_count),
            run_count = coalesce(${when(v.runCount, '::integer')}, run_count),
            warm_up_from = CASE WHEN ${when(v.setDay, '::boolean')} THEN ${v.warmUpFrom} ELSE warm_up_from END,
            engine_failures = coalesce(${when(v.engineFailures, '::integer')}, engine_failures)
       ${fromSql}
      WHERE lanes.user_id = ${v.userId} AND lanes.holder = ${v.workerId}
    RETURNING ${returningSql}next_send_at AS "nextSendAt", greatest(0, extract(epoch FROM next_send_at - clock_timestamp()) * 1000)::float8 AS "waitMs"`;
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
 * `recordSentMany`'s request rows, each with whether its outcome applied (`counted` has its row): one
 * hash join, so the lanes' update reads each row's flag, instead of every flag looking through
 * `counted` again (a scan of the batch per flag per row: quadratic in JOBS_STEP_BATCH).
 */
const APPLIED_REQUESTS_SQL = 'FROM (SELECT req.*, c.p_i IS NOT NULL AS applied FROM req LEFT JOIN counted c ON c.p_i = req.p_i) a';

/** A sent message to record and its lane to reschedule, one of a batch (`LaneRepository.recordSentMany`). */
export interface SentRecord {
  send: { jobId: string; seq: number; userId: string };
  at: Date;
  pacedMs: number;
  slot: LaneSlot;
  counters: Partial<LaneCounters>;
}

/**
 * Books the lane of each row of `fromSql` (its user in `userIdSql`) for its next slot `paceSecsSql`
 * seconds after this one (taken ahead of it, or now when it is past), as an UPDATE another statement
 * runs in a CTE (the take books in the same round trip).
 */
export function bookLanesSql(fromSql: string, userIdSql: string, paceSecsSql: string): string {
  return `UPDATE lanes SET updated_at = now(),
            (next_send_at, paced_at) = (SELECT slot, slot FROM (SELECT greatest(next_send_at, clock_timestamp()) + make_interval(secs => ${paceSecsSql}) AS slot) s)
      FROM ${fromSql}
      WHERE lanes.user_id = ${userIdSql}`;
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
   * this row lock first. A step that took the lock before it decides "no more work" while the start
   * waits, and the start then reactivates the lane; a step that waited for the start's lock cannot see
   * the start's job in that statement, so it looks again before resting (`JobsRepository.afterNoJob`).
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
   * Locks the lanes of `userIds` for the caller's transaction (one round trip for a batch of steps):
   * for each, who holds it, how long until its next slot (negative when past), its counters, the
   * account's stored policy, and the user's next workable job, locked too (lane first, then job, as
   * every step does). Answers in the order of `userIds`; undefined for a user with no lane.
   */
  async lockMany(em: EntityManager, userIds: string[], leadMs: number): Promise<Array<(LockedLane & { job: LaneJob | undefined }) | undefined>> {
    // The slot is the lane's, or the start of a scheduled job taken ahead of it when that is later.
    const found = await rows<LockedLane & Record<string, unknown> & { i: string }>(
      em,
      `SELECT r.i, l.holder, (extract(epoch FROM greatest(l.next_send_at, j."slotFloor") - clock_timestamp()) * 1000)::float8 AS "waitMs", ${COUNTERS},
              ${policyColumnsSql('p')}, ${laneJobColumnsSql('j')}
         FROM unnest($1::text[]) WITH ORDINALITY AS r(user_id, i)
         CROSS JOIN LATERAL (SELECT * FROM lanes WHERE lanes.user_id = r.user_id FOR NO KEY UPDATE) l
         LEFT JOIN policies p ON p.user_id = l.user_id
         LEFT JOIN LATERAL (${nextWorkableJobSql('l.user_id', '$2')}) j ON true`,
      [userIds, secs(leadMs)],
      STEP_PREPARED,
    );
    return inInputOrder(found, userIds.length).map((f) => {
      if (!f) return undefined;
      const { holder, waitMs, dayKey, dayCount, runCount, warmUpFrom, engineFailures, backoffLevel, backoffAt } = f;
      return { holder, waitMs, dayKey, dayCount, runCount, warmUpFrom, engineFailures, backoffLevel, backoffAt, policy: storedPolicyOf(f), job: laneJobOf(f) };
    });
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
    return row(em, rescheduleSql(rescheduleAt(1), 'true'), rescheduleParams(userId, workerId, slot, counters));
  }

  /**
   * Messages sent, recorded and their lanes rescheduled, for a batch of steps in one statement: each
   * record's `slot` and `counters` apply only when its outcome did (the recipient was still `sending`);
   * otherwise its lane is rescheduled as after nothing. Answers in the order of `records`: `job` is the
   * job as counted (undefined when the outcome did not apply), `lane` undefined when `workerId` no
   * longer holds it.
   */
  async recordSentMany(em: EntityManager, workerId: string, records: SentRecord[]): Promise<Array<{ job: LaneJob | undefined; lane: Rescheduled | undefined }>> {
    // Per record, the reschedule's values as columns of `a`, the request rows with whether their outcome
    // applied (the worker is one parameter for all).
    const perRecord = RESCHEDULE_KEYS.filter((k) => k !== 'workerId');
    const params = records.map((r) => rescheduleParams(r.send.userId, workerId, r.slot, r.counters));
    const values = { ...Object.fromEntries(perRecord.map((k) => [k, `a."p_${k}"`])), workerId: '$1' } as RescheduleValues;
    const types = { userId: 'text', notBeforeSecs: 'float8', exactly: 'timestamptz', floor: 'timestamptz', setDay: 'boolean', dayKey: 'text', dayCount: 'integer', runCount: 'integer', warmUpFrom: 'text', engineFailures: 'integer' };
    const found = await rows<Record<string, unknown> & { i: string }>(
      em,
      `WITH req AS (
         SELECT * FROM unnest($2::uuid[], $3::integer[], $4::timestamptz[], $5::integer[], ${perRecord.map((k, i) => `$${6 + i}::${types[k as keyof typeof types]}[]`).join(', ')})
                WITH ORDINALITY AS r(p_job_id, p_seq, p_at, p_paced, ${perRecord.map((k) => `"p_${k}"`).join(', ')}, p_i)
       ), ${recordSentCtes('req')},
       lane AS (${rescheduleSql(values, 'a.applied', APPLIED_REQUESTS_SQL, 'a.p_i, ')})
       SELECT req.p_i AS i, ${laneJobColumnsSql('counted')}, lane."nextSendAt" AS "lane_nextSendAt", lane."waitMs" AS "lane_waitMs"
         FROM req LEFT JOIN counted ON counted.p_i = req.p_i LEFT JOIN lane ON lane.p_i = req.p_i`,
      [
        workerId,
        records.map((r) => r.send.jobId),
        records.map((r) => r.send.seq),
        records.map((r) => r.at),
        records.map((r) => r.pacedMs),
        ...perRecord.map((k) => params.map((p) => p[RESCHEDULE_KEYS.indexOf(k)])),
      ],
      STEP_PREPARED,
    );
    return inInputOrder(found, records.length).map((f) => {
      const lane = f?.lane_nextSendAt ? { nextSendAt: f.lane_nextSendAt as Date, waitMs: f.lane_waitMs as number } : undefined;
      return { job: f ? laneJobOf(f) : undefined, lane };
    });
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
