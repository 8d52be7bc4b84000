import { Injectable } from '@nestjs/common';
import type { EntityManager, QueryPartialEntity } from 'typeorm';
import { row, rows } from '@bns/service-kit';
import { selectList, type ColumnMap } from '../store/columns.js';
import { laneSlotSql, msUntilSql } from '../store/lane-slot.js';
import { LaneEntity } from './lane.entity.js';

/** The column map of `jobs.lanes`. */
export const LANE_COLUMNS = {
  userId: 'user_id',
  active: 'active',
  nextSendAt: 'next_send_at',
  pacedAt: 'paced_at',
  holder: 'holder',
  updatedAt: 'updated_at',
  dayKey: 'day_key',
  dayCount: 'day_count',
  runCount: 'run_count',
  warmUpFrom: 'warm_up_from',
  engineFailures: 'engine_failures',
  backoffLevel: 'backoff_level',
  backoffAt: 'backoff_at',
  unanswered: 'unanswered',
  sendingJob: 'sending_job',
  sendingSeq: 'sending_seq',
} as const satisfies ColumnMap<LaneEntity>;

/** What the sending policy counts on a lane (the day's sends, the run since a pause, warm-up, back-off). */
export const LANE_COUNTER_KEYS = [
  'dayKey',
  'dayCount',
  'runCount',
  'warmUpFrom',
  'engineFailures',
  'backoffLevel',
  'backoffAt',
  'unanswered',
] as const;
export type LaneCounters = Pick<LaneEntity, (typeof LANE_COUNTER_KEYS)[number]>;
const COUNTERS = selectList(LANE_COLUMNS, LANE_COUNTER_KEYS);

/** A lane handed to a worker, with how long until its next send. */
export interface LaneDue {
  userId: string;
  dueInMs: number;
}

const secs = (ms: number) => ms / 1000;

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
   * the start's job in that statement, so it looks again before resting (`LaneStepRepository.afterNoJob`).
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
  async claim(
    em: EntityManager,
    workerId: string,
    limit: number,
    lookaheadMs: number,
    staleMs: number,
    userId?: string,
  ): Promise<LaneDue[]> {
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
      RETURNING l.user_id AS "userId", ${msUntilSql(laneSlotSql('l'))} AS "dueInMs"`,
      [workerId, limit, secs(lookaheadMs), secs(staleMs), userId ?? null],
    );
  }

  /** Active lanes the database says `workerId` holds. */
  held(em: EntityManager, workerId: string): Promise<LaneDue[]> {
    return rows<LaneDue>(
      em,
      `SELECT user_id AS "userId", ${msUntilSql(laneSlotSql('lanes'))} AS "dueInMs"
         FROM lanes WHERE holder = $1 AND active`,
      [workerId],
    );
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
