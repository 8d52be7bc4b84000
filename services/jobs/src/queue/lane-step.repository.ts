import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import type { SendingPolicy, SkipReason } from '@bns/contracts';
import { inInputOrder, row, rows } from '@bns/service-kit';
import { POLICY_COLUMNS, POLICY_KEYS, storedPolicyOf } from '../policy/policy.repository.js';
import { fieldsOf, selectList } from '../store/columns.js';
import type { JobRecipientEntity } from '../store/job-recipient.entity.js';
import {
  JOB_COLUMNS,
  LANE_JOB_KEYS,
  OPEN_JOB_STATUSES,
  USER_RESUMED_SQL,
  type LaneJob,
} from '../store/jobs.repository.js';
import { laneSlotSql, msUntilSql } from '../store/lane-slot.js';
import { LANE_COLUMNS, LANE_COUNTER_KEYS, type LaneCounters } from './lane.repository.js';
import type { LaneEntity } from './lane.entity.js';
import { STEP_PREPARED } from './step-planning.js';

/**
 * The lane step's statements, and the SQL they share, in one place. A step works on several tables at
 * once (the lane, its account's policy, the job, its recipients, the opt-out list and the
 * not-on-WhatsApp memory), each in one statement so a step costs few round trips; the pieces those
 * statements have in common (what a workable job is, what "in flight" means, which recipients the
 * account may send to, how a lane is booked and rescheduled) are private to this file. Everyone else
 * calls these methods; nobody splices their SQL.
 */

// ---- what a step reads of the lane, the policy and the job

/** The lane as its step sees it, locked: holder, time to its slot, and the policy's counters. */
export type LockedLane = Pick<LaneEntity, 'holder'> &
  LaneCounters & {
    waitMs: number;
    /** The account's stored sending policy, read with the lock; undefined when it never set one. */
    policy: SendingPolicy | undefined;
  };

const secs = (ms: number) => ms / 1000;
const OPEN = `(${OPEN_JOB_STATUSES.map((s) => `'${s}'`).join(', ')})`;
const LANE_JOB = selectList(JOB_COLUMNS, LANE_JOB_KEYS);
/** The job the lock statement read (`nextWorkableJobSql` as `j`), its columns prefixed `job_`. */
const LANE_JOB_OF_J = LANE_JOB_KEYS.map((k) => `j."${k}" AS "job_${k}"`).join(', ');

/**
 * Jobs the lane may send for now: not paused for the user to resume, and scheduled ones once their time is
 * within `leadSecsSql` (the step that prepares a send runs that long before its slot).
 */
const workableSql = (leadSecsSql: string) =>
  `(status IN ('queued', 'running') OR (status = 'paused' AND paused_reason NOT IN ${USER_RESUMED_SQL}) OR (status = 'scheduled' AND start_at <= now() + make_interval(secs => ${leadSecsSql})))`;

/**
 * The user's oldest job the lane may send for now, locked: an account sends one job at a time, in
 * order; a job the user paused steps aside, a scheduled one waits for its time. `userIdSql` is the
 * user's id as the enclosing statement has it (a column of a LATERAL join). NO KEY: the rows that
 * reference the job (log lines, receipts) are written meanwhile without waiting for the step.
 *
 * A scheduled job is taken up to `leadSecsSql` before its start, like any send prepared ahead of its
 * slot; its `slotFloor` (the start) says when its first message may leave, which the lane's slot must
 * not precede.
 */
const nextWorkableJobSql = (userIdSql: string, leadSecsSql: string) =>
  `SELECT ${LANE_JOB}, CASE WHEN status = 'scheduled' THEN start_at END AS "slotFloor"
            FROM jobs WHERE user_id = ${userIdSql} AND status IN ${OPEN} AND ${workableSql(leadSecsSql)} ORDER BY transactional DESC, created_at, id LIMIT 1 FOR NO KEY UPDATE`;

// ---- recipients

/**
 * "The lane of user `user` names the recipient row `r` as its send in flight" (`LaneEntity.sendingJob`):
 * the take names its recipient on the lane it books anyway, so taking someone writes no recipient row.
 */
const namedByLaneSql = (r: string, user: string) =>
  // A scalar subquery by the lane's key: an EXISTS may be planned as a hash of the whole lanes table.
  `coalesce((SELECT f.sending_job = ${r}.job_id AND f.sending_seq = ${r}.seq FROM lanes f WHERE f.user_id = ${user}), false)`;

/**
 * A recipient taken for sending whose outcome is not recorded yet ("sending"), as SQL on the row `r`:
 * pending, and its lane names it (`named`, usually `namedByLaneSql`; a lane whose worker lost it before
 * rescheduling may still name a recipient since recorded). Marks on the row itself count too: `in_flight`
 * (a lane that moved to another job while it named this one, or an earlier version's take) and `state
 * = 'sending'` (an older version's), so a rolling upgrade takes over their sends as they are.
 */
const inFlightSql = (r: string, named: string) =>
  `(${r}.in_flight OR ${r}.state = 'sending' OR (${r}.state = 'pending' AND ${named}))`;

/** Waiting to be sent and not in flight (what a mid-job opt-out may still move to the skips), as SQL on the row `r`. */
const waitingSql = (r: string, named: string) => `(${r}.state = 'pending' AND NOT ${r}.in_flight AND NOT ${named})`;

/**
 * For an outcome recorded outside a batch (job `$1`, seq `$2`): the CTE `named`, the lane (if any) that
 * names that recipient, and `unnamed`, which clears that lane's mark. The mark goes with the outcome
 * even when the worker lost its lane meanwhile, so the recipient is not taken for a send in flight again.
 */
const NAMED_CTES = `named AS (SELECT l.user_id FROM jobs j JOIN lanes l ON l.user_id = j.user_id
                                WHERE j.id = $1 AND l.sending_job = $1 AND l.sending_seq = $2),
       unnamed AS (UPDATE lanes SET sending_job = NULL, sending_seq = NULL WHERE user_id IN (SELECT user_id FROM named))`;
const NAMED = 'EXISTS (SELECT 1 FROM named)';

/**
 * A recipient phone is suppressed for an account when it is on the opt-out list, or WhatsApp said it
 * does not know it within the memory window. `user`, `phone` and `days` are SQL expressions (columns
 * qualified with their table, or `$n` parameters) of the statement this is put into.
 */
const suppressionReasonSql = (user: string, phone: string, days: string) =>
  `CASE WHEN EXISTS (SELECT 1 FROM opt_outs o WHERE o.user_id = ${user} AND o.phone = ${phone}) THEN 'opted_out'
               WHEN EXISTS (SELECT 1 FROM not_on_whatsapp n WHERE n.user_id = ${user} AND n.phone = ${phone}
                              AND n.at > now() - make_interval(days => ${days})) THEN 'not_on_whatsapp' END`;

/**
 * "This recipient may be taken for sending": `recipientPhone` is the recipient's phone column, qualified
 * with its table (a bare `phone` would name the opt-out's own column inside the subquery), `user` and
 * `days` the statement's parameters, `inFlight` the recipient's in-flight condition. Only waiting
 * recipients are held back: one left in flight by a dead worker may already be out, and its idempotency
 * key settles it.
 */
const sendableSql = (recipientPhone: string, inFlight: string, user: string, days: string) =>
  `(${inFlight} OR (${suppressionReasonSql(user, recipientPhone, days)}) IS NULL)`;

/**
 * The rows (`phone`, `reason`) of the phones in `phones`, a JSON array of strings (`phonesParam`), that
 * the account `user` must not send to, and why (`suppressionReasonSql`); `user`, `phones` and `days` are
 * SQL expressions. A whole list asked at once: a job's start (inside its admission statement too) and
 * the review step's check.
 */
export const suppressedAmongSql = (user: string, phones: string, days: string) =>
  `SELECT s.phone, s.reason FROM (
     SELECT p.phone, ${suppressionReasonSql(user, 'p.phone', days)} AS reason FROM json_array_elements_text(${phones}::json) AS p(phone)
   ) s WHERE s.reason IS NOT NULL`;

/**
 * A list of phones as the one JSON parameter `suppressedAmongSql` reads: serialised natively, where
 * a text[] parameter is escaped element by element in JavaScript (50,000 phones: 7–15 ms against 2 ms).
 */
export const phonesParam = (phones: readonly string[]) => JSON.stringify(phones);

/** The next recipient to send to, with the text it receives. */
export type OpenRecipient = Pick<JobRecipientEntity, 'seq' | 'phone' | 'attempts' | 'state'> & {
  text: string;
  /** Pending recipients before it were passed over: the account must not send to them (opted out, not on WhatsApp). */
  passedOver: boolean;
  /** The take counted it on its lane as a message to a number that never replied (see `TakenCounters`). */
  unanswered: boolean;
};

/**
 * The lane's counters with the message a take books counted in (the day's count, warm-up, the run
 * since the long pause): a message is counted when it is taken, so a plain send's record does not
 * write the lane again. A recipient taken again after its worker died was counted by its first take;
 * an outcome that sent nothing puts the counters back (`LaneStepRepository.reschedule`).
 */
export type TakenCounters = Pick<LaneCounters, 'dayKey' | 'dayCount' | 'warmUpFrom' | 'runCount'>;

/** One take of `takeFirstOpenMany`: the job, its message (for recipients without a text of their own), its user and the pace to book. */
export interface RecipientTake {
  jobId: string;
  message: string;
  userId: string;
  paceMs: number;
  /** The lane's counters with this message counted; absent, the take counts nothing. */
  counted?: TakenCounters;
}

// ---- outcomes

/** The job's count of one more outcome, up to its FROM or WHERE; a send also clears the unlinked mark. */
function countOutcomeSql(column: 'sent' | 'failed'): string {
  const relinked =
    column === 'sent'
      ? `unlinked_since = NULL,
              paused_reason = CASE WHEN paused_reason = 'unlinked' THEN NULL ELSE paused_reason END,
              resumes_at = CASE WHEN paused_reason = 'unlinked' THEN NULL ELSE resumes_at END,`
      : '';
  return `UPDATE jobs SET ${column} = ${column} + 1, ${relinked}
              status = CASE WHEN status IN ('running', 'paused') AND sent + failed + skipped + 1 >= total THEN 'completed' ELSE status END,
              finished_at = CASE WHEN status IN ('running', 'paused') AND sent + failed + skipped + 1 >= total THEN now() ELSE finished_at END`;
}

/**
 * A batch of sends recorded, as two CTEs: `done` (the recipients) and `counted` (their jobs as counted), for every row of `req`, a CTE of the
 * sends (columns `p_job_id`, `p_seq`, `p_at`, `p_paced` and the row's index `p_i`); `counted`
 * returns `p_i` with the job's lane-job columns, for the sends whose recipient was still in flight.
 * A batch holds one send per job (a lane steps one at a time), so each job counts one.
 */
function recordSentCtes(req: string): string {
  return `done AS (
      UPDATE job_recipients t SET state = 'sent', in_flight = false, done_at = ${req}.p_at, error = NULL, paced_ms = ${req}.p_paced FROM ${req}
       WHERE t.job_id = ${req}.p_job_id AND t.seq = ${req}.p_seq AND ${inFlightSql('t', namedByLaneSql('t', `${req}."p_userId"`))} RETURNING ${req}.p_i, ${req}.p_job_id, t.phone AS p_phone),
    counted AS (${countOutcomeSql('sent')} FROM done WHERE jobs.id = done.p_job_id RETURNING done.p_i, ${LANE_JOB})`;
}

// ---- the lane's slot

/** Where a send's outcome puts the lane's next slot (see `LaneStepRepository.reschedule`). */
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
const RESCHEDULE_KEYS = [
  'userId',
  'workerId',
  'notBeforeSecs',
  'exactly',
  'floor',
  'setDay',
  'dayKey',
  'dayCount',
  'runCount',
  'warmUpFrom',
  'engineFailures',
] as const;

/** `rescheduleParams` as $first, $first+1, …. */
const rescheduleAt = (first: number): RescheduleValues =>
  Object.fromEntries(RESCHEDULE_KEYS.map((k, i) => [k, `$${first + i}`])) as unknown as RescheduleValues;

/**
 * One more message to a number that never replied, on the day `dayKeySql` (the send's day in the
 * policy's zone), added to the lane's `unanswered` counts. The first count of a day also drops days
 * older than 62 (a calendar month and the rolling 30 days never reach further back).
 */
const bumpUnansweredSql = (dayKeySql: string) =>
  `(CASE WHEN jsonb_exists(lanes.unanswered, ${dayKeySql}) THEN lanes.unanswered
         ELSE (SELECT coalesce(jsonb_object_agg(e.key, e.value), '{}'::jsonb) FROM jsonb_each(lanes.unanswered) e
                WHERE e.key >= to_char(${dayKeySql}::date - 62, 'YYYY-MM-DD')) END)
   || jsonb_build_object(${dayKeySql}, coalesce((lanes.unanswered ->> ${dayKeySql})::int, 0) + 1)`;

/**
 * `reschedule`'s UPDATE: the slot's `exactly`/`floor` and the counters apply only where `appliedSql`
 * holds; `fromSql`, `whereSql` and `returningSql` add a FROM item (a batch's request rows), a condition
 * and columns; `uncountSql`, when given, is the day (text, or NULL) whose count of messages to numbers
 * that never replied loses the one its take counted (the send did not go out).
 */
function rescheduleSql(
  v: RescheduleValues,
  appliedSql: string,
  fromSql = '',
  returningSql = '',
  whereSql = 'true',
  uncountSql?: string,
): string {
  const when = (value: string, type = '') =>
    appliedSql === 'true' ? `${value}${type}` : `CASE WHEN ${appliedSql} THEN ${value}${type} END`;
  return `UPDATE lanes SET updated_at = now(), sending_job = NULL, sending_seq = NULL,
            (next_send_at, paced_at) = (
              SELECT slot, slot FROM (
                SELECT CASE WHEN ${when(v.exactly, '::timestamptz')} IS NOT NULL THEN least(next_send_at, greatest(now(), ${v.exactly}::timestamptz))
                            ELSE greatest(next_send_at, now() + make_interval(secs => ${v.notBeforeSecs}), coalesce(${when(v.floor, '::timestamptz')}, '-infinity')) END AS slot) s),
            day_key = CASE WHEN ${when(v.setDay, '::boolean')} THEN ${v.dayKey} ELSE day_key END,
            day_count = coalesce(${when(v.dayCount, '::integer')}, day_count),
            run_count = coalesce(${when(v.runCount, '::integer')}, run_count),
            warm_up_from = CASE WHEN ${when(v.setDay, '::boolean')} THEN ${v.warmUpFrom} ELSE warm_up_from END,
            engine_failures = coalesce(${when(v.engineFailures, '::integer')}, engine_failures)${
              uncountSql
                ? `,
            unanswered = CASE WHEN NOT jsonb_exists(lanes.unanswered, ${uncountSql}) THEN lanes.unanswered
                              WHEN (lanes.unanswered ->> ${uncountSql})::int <= 1 THEN lanes.unanswered - ${uncountSql}
                              ELSE jsonb_set(lanes.unanswered, ARRAY[${uncountSql}], to_jsonb((lanes.unanswered ->> ${uncountSql})::int - 1)) END`
                : ''
            }
       ${fromSql}
      WHERE lanes.user_id = ${v.userId} AND lanes.holder = ${v.workerId} AND ${whereSql}
    RETURNING ${returningSql}next_send_at AS "nextSendAt", ${msUntilSql('next_send_at')} AS "waitMs"`;
}

function rescheduleParams(
  userId: string,
  workerId: string,
  slot: LaneSlot,
  counters?: Partial<LaneCounters>,
): unknown[] {
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
 * hash join, so the lanes' statements read each row's flag, instead of every flag looking through
 * `counted` again (a scan of the batch per flag per row: quadratic in JOBS_STEP_BATCH).
 */
const APPLIED_SENDS_CTE = `applied AS (SELECT req.*, c.p_i IS NOT NULL AS applied FROM req LEFT JOIN counted c ON c.p_i = req.p_i)`;

/** A sent message to record and its lane to reschedule, one of a batch (`LaneStepRepository.recordSentMany`). */
export interface SentRecord {
  send: { jobId: string; seq: number; userId: string };
  at: Date;
  pacedMs: number;
  slot: LaneSlot;
  counters: Partial<LaneCounters>;
  /**
   * The lane stays as the take wrote it: its slot is the recipient's (`laneSlotSql`: sent at `at`,
   * `pacedMs` after it) and its counters were counted by the take. Only for a send that went out now
   * (not a duplicate, whose slot moves earlier) on a lane with no engine failures to clear.
   */
  keepLane: boolean;
}

/**
 * Books the lane of each take `t` (a row of the take's `taken`) for its next slot `p_pace` seconds after
 * this one (the lane's slot, `laneSlotSql`, taken ahead of it, or now when it is past), naming the
 * recipient taken as its send in flight, and counts the message (`TakenCounters`, and on its day the
 * messages to numbers that never replied, when `t.unanswered`) unless it was counted by an earlier take
 * (`t.counts` false); as an UPDATE the take runs in a CTE (it books in the same round trip).
 */
const BOOK_LANES_SQL = `UPDATE lanes SET updated_at = now(), sending_job = t.p_job_id, sending_seq = t.seq,
            (next_send_at, paced_at) = (SELECT slot, slot FROM (SELECT greatest(${laneSlotSql('lanes')}, clock_timestamp()) + make_interval(secs => t.p_pace) AS slot) s),
            day_key = CASE WHEN t.counts THEN t.p_day_key ELSE day_key END,
            day_count = CASE WHEN t.counts THEN t.p_day_count ELSE day_count END,
            warm_up_from = CASE WHEN t.counts THEN t.p_warm_up_from ELSE warm_up_from END,
            run_count = CASE WHEN t.counts THEN t.p_run_count ELSE run_count END,
            unanswered = CASE WHEN t.unanswered THEN ${bumpUnansweredSql('t.p_day_key')} ELSE lanes.unanswered END
      FROM taken t
      WHERE lanes.user_id = t.p_user_id`;

/**
 * Every statement of a lane step: the lock of the lane with its policy and job, the take of the next
 * recipient, the records of outcomes with the lane's next slot, and the opt-outs the step applies.
 * Times are the database's clock, so replicas with skewed clocks still pace one account alike. Outcome
 * updates apply only to a recipient still in flight, so a worker that lost its lane cannot record over
 * the one that took it; each says whether it applied.
 */
@Injectable()
export class LaneStepRepository {
  // ---- the lock

  /**
   * Locks the lanes of `userIds` for the caller's transaction (one round trip for a batch of steps):
   * for each, who holds it, how long until its next slot (negative when past), its counters, the
   * account's stored policy, and the user's next workable job, locked too (lane first, then job, as
   * every step does). Answers in the order of `userIds`; undefined for a user with no lane.
   */
  async lockMany(
    em: EntityManager,
    userIds: string[],
    leadMs: number,
  ): Promise<Array<(LockedLane & { job: LaneJob | undefined }) | undefined>> {
    // The slot is the lane's, or the start of a scheduled job taken ahead of it when that is later.
    const found = await rows<LockedLane & Record<string, unknown> & { i: string }>(
      em,
      `SELECT r.i, l.holder, (extract(epoch FROM greatest(${laneSlotSql('l')}, j."slotFloor") - clock_timestamp()) * 1000)::float8 AS "waitMs",
              ${selectList(LANE_COLUMNS, LANE_COUNTER_KEYS, 'l')},
              p.user_id IS NOT NULL AS "policy_stored", ${selectList(POLICY_COLUMNS, POLICY_KEYS, 'p', 'policy_')}, ${LANE_JOB_OF_J}
         FROM unnest($1::text[]) WITH ORDINALITY AS r(user_id, i)
         CROSS JOIN LATERAL (SELECT * FROM lanes WHERE lanes.user_id = r.user_id FOR NO KEY UPDATE) l
         LEFT JOIN policies p ON p.user_id = l.user_id
         LEFT JOIN LATERAL (${nextWorkableJobSql('l.user_id', '$2')}) j ON true`,
      [userIds, secs(leadMs)],
      STEP_PREPARED,
    );
    return inInputOrder(found, userIds.length).map((f) => {
      if (!f) return undefined;
      const {
        holder,
        waitMs,
        dayKey,
        dayCount,
        runCount,
        warmUpFrom,
        engineFailures,
        backoffLevel,
        backoffAt,
        unanswered,
      } = f;
      const policy = storedPolicyOf(f, 'policy_');
      return {
        holder,
        waitMs,
        dayKey,
        dayCount,
        runCount,
        warmUpFrom,
        engineFailures,
        backoffLevel,
        backoffAt,
        unanswered,
        policy,
        job: fieldsOf<LaneJob>(f, LANE_JOB_KEYS, 'job_'),
      };
    });
  }

  /**
   * What a lane whose step found no workable job should do, read in a statement of its own (so with a
   * fresh snapshot, while the caller still holds the lane's lock): `workable` when a workable job is
   * there after all, and when the user's next scheduled job is due, if any.
   *
   * The step's lock statement can miss a job: when a start held the lane's lock, the step waited for
   * it, and under READ COMMITTED Postgres then re-reads only the lane row, not the job the start
   * committed with it. Deciding "no more work" on that would leave the job queued with the lane at rest.
   */
  async afterNoJob(
    em: EntityManager,
    userId: string,
    leadMs: number,
  ): Promise<{ workable: boolean; nextStart: Date | undefined }> {
    const found = await row<{ workable: boolean; at: Date | null }>(
      em,
      `SELECT EXISTS (SELECT 1 FROM jobs WHERE user_id = $1 AND status IN ${OPEN} AND ${workableSql('$2')}) AS workable,
              (SELECT min(start_at) FROM jobs WHERE user_id = $1 AND status = 'scheduled') AS at`,
      [userId, leadMs / 1000],
    );
    return { workable: found?.workable ?? false, nextStart: found?.at ?? undefined };
  }

  /** Sending (again), for a batch of lane steps: started now unless it had started before; any pause is over. */
  async markRunningMany(em: EntityManager, jobIds: string[]): Promise<void[]> {
    await rows(
      em,
      // A scheduled job taken ahead of its start has started at its start, when its first message leaves.
      `UPDATE jobs SET status = 'running', started_at = coalesce(started_at, CASE WHEN status = 'scheduled' THEN greatest(now(), start_at) ELSE now() END),
              paused_reason = NULL, resumes_at = NULL
        WHERE id IN (SELECT unnest($1::uuid[]))`,
      [jobIds],
      STEP_PREPARED,
    );
    return jobIds.map(() => undefined);
  }

  // ---- the take

  /**
   * For each take of a batch of lane steps, in one statement: the job's first recipient not done yet,
   * in list order, and the user's lane booked for its next slot `paceMs` after this one, naming that
   * recipient as its send in flight (no recipient row is written). Its `state` is what it was before
   * (`sending` = left in flight by a worker that died mid-send: it goes out again with the same key). A pending recipient the account must not send to (opted out, or not on
   * WhatsApp within `notOnWhatsAppDays`) is passed over, so one who opted out a moment ago is never
   * taken; `passedOver` says some were, so the caller moves them to the job's skips. Answers in the
   * order of `takes`; undefined where the job has nobody left to send to (the lane is not booked).
   */
  async takeFirstOpenMany(
    em: EntityManager,
    takes: RecipientTake[],
    notOnWhatsAppDays: number,
  ): Promise<Array<OpenRecipient | undefined>> {
    const inFlight = inFlightSql('job_recipients', namedByLaneSql('job_recipients', 'req.p_user_id'));
    const found = await rows<OpenRecipient & { i: string }>(
      em,
      `WITH req AS (
         SELECT * FROM unnest($1::uuid[], $2::text[], $3::text[], $4::float8[], $6::text[], $7::integer[], $8::text[], $9::integer[])
                WITH ORDINALITY AS r(p_job_id, p_message, p_user_id, p_pace, p_day_key, p_day_count, p_warm_up_from, p_run_count, p_i)
       ), pick AS MATERIALIZED (
         -- Materialized: each take's first open recipient is found once. Inlined, the planner could
         -- scan the job's rows in the update and look for the first open one again for every row.
         SELECT req.*, x.seq, x.state, x.phone, x.text, x.attempts FROM req
          CROSS JOIN LATERAL (
            SELECT seq, CASE WHEN ${inFlight} THEN 'sending' ELSE state END AS state, phone, text, attempts FROM job_recipients
             WHERE job_id = req.p_job_id AND state IN ('pending', 'sending')
               AND ${sendableSql('job_recipients.phone', inFlight, 'req.p_user_id', '$5')}
             ORDER BY seq LIMIT 1) x
       ), counting AS (
         -- A recipient left in flight was counted when it was first taken.
         SELECT pick.*, pick.state <> 'sending' AND pick.p_day_count IS NOT NULL AS counts FROM pick
       ), taken AS MATERIALIZED (
         SELECT c.p_i AS i, c.p_job_id, c.p_user_id, c.p_pace, c.p_day_key, c.p_day_count, c.p_warm_up_from, c.p_run_count, c.counts,
                c.seq, c.phone, coalesce(c.text, c.p_message) AS text, c.attempts, c.state,
                EXISTS (SELECT 1 FROM job_recipients o WHERE o.job_id = c.p_job_id AND ${waitingSql('o', namedByLaneSql('o', 'c.p_user_id'))} AND o.seq < c.seq) AS "passedOver",
                -- One probe of the repliers' key, no write.
                c.counts AND c.p_day_key IS NOT NULL AND NOT EXISTS (SELECT 1 FROM repliers x WHERE x.user_id = c.p_user_id AND x.phone = c.phone) AS unanswered
           FROM counting c
       ), carried AS (
         -- The lane still names another recipient (its worker died mid-send, and a notification job went
         -- ahead): that one keeps its mark on its own row, so it is still known to be in flight.
         UPDATE job_recipients t SET in_flight = true FROM lanes l, taken
          WHERE l.user_id = taken.p_user_id AND t.job_id = l.sending_job AND t.seq = l.sending_seq
            AND (t.job_id, t.seq) <> (taken.p_job_id, taken.seq) AND t.state = 'pending' AND NOT t.in_flight
       ), booked AS (${BOOK_LANES_SQL})
       SELECT i, seq, phone, text, attempts, state, "passedOver", unanswered FROM taken`,
      [
        takes.map((t) => t.jobId),
        takes.map((t) => t.message),
        takes.map((t) => t.userId),
        takes.map((t) => t.paceMs / 1000),
        notOnWhatsAppDays,
        takes.map((t) => t.counted?.dayKey ?? null),
        takes.map((t) => t.counted?.dayCount ?? null),
        takes.map((t) => t.counted?.warmUpFrom ?? null),
        takes.map((t) => t.counted?.runCount ?? null),
      ],
      STEP_PREPARED,
    );
    return inInputOrder(found, takes.length).map((f) => {
      if (!f) return undefined;
      const { i: _i, ...recipient } = f;
      return recipient;
    });
  }

  /** Marks a recipient in flight on its own row, outside a take (a take names its recipient on the lane). */
  async markSending(em: EntityManager, jobId: string, seq: number): Promise<void> {
    await rows(
      em,
      `UPDATE job_recipients SET state = 'pending', in_flight = true, next_attempt_at = NULL WHERE job_id = $1 AND seq = $2`,
      [jobId, seq],
    );
  }

  // ---- opt-outs the step applies

  /**
   * Which of `phones` an account must not send to, and why (opted out wins over not on WhatsApp): the
   * rule the take applies, asked of a whole list at once (a job's start, the review step's check).
   */
  async suppressedAmong(
    em: EntityManager,
    userId: string,
    phones: readonly string[],
    notOnWhatsAppDays: number,
  ): Promise<Map<string, SkipReason>> {
    if (phones.length === 0) return new Map();
    const found = await rows<{ phone: string; reason: SkipReason }>(em, suppressedAmongSql('$1', '$2', '$3'), [
      userId,
      phonesParam(phones),
      notOnWhatsAppDays,
    ]);
    return new Map(found.map((r) => [r.phone, r.reason]));
  }

  /**
   * Moves the job's pending recipients that became suppressed (a STOP while the job runs) out of the
   * queue into its skips. Runs in the lane step's transaction, before it takes the next recipient; the
   * caller adds them to the job's `skipped` count. Only entries made since the job was created are
   * looked at (older ones were skipped at its start), so a step costs the few opt-outs of the last
   * minutes, not a scan of the job's recipients.
   */
  async skipSuppressedRecipients(
    em: EntityManager,
    userId: string,
    jobId: string,
    notOnWhatsAppDays: number,
  ): Promise<{ phone: string; reason: SkipReason }[]> {
    return rows<{ phone: string; reason: SkipReason }>(
      em,
      `WITH since AS (
         -- A margin for an opt-out whose transaction began before the job's start and committed after it.
         SELECT created_at - interval '5 minutes' AS t FROM jobs WHERE id = $1
       ), suppressed AS (
         SELECT o.phone, 'opted_out' AS reason FROM opt_outs o, since
          WHERE o.user_id = $2 AND o.at >= since.t
         UNION ALL
         SELECT n.phone, 'not_on_whatsapp' FROM not_on_whatsapp n, since
          WHERE n.user_id = $2 AND n.at >= since.t AND n.at > now() - make_interval(days => $3)
       ), moved AS (
         DELETE FROM job_recipients r
          USING (SELECT DISTINCT ON (phone) phone, reason FROM suppressed ORDER BY phone, reason DESC) s
          WHERE r.job_id = $1 AND r.phone = s.phone AND ${waitingSql('r', namedByLaneSql('r', '$2'))}
         RETURNING r.seq, r.phone, r.variables, s.reason
       )
       -- The row's variables go with it, so the report still shows whom it skipped.
       INSERT INTO job_skips (job_id, phone, reason, variables)
       SELECT $1, m.phone, m.reason, m.variables FROM moved m
        ORDER BY m.seq
       ON CONFLICT (job_id, phone) DO NOTHING
       RETURNING phone, reason`,
      [jobId, userId, notOnWhatsAppDays],
    );
  }

  /** WhatsApp said it does not know this number: remember it (again) from now, so later jobs skip it. */
  async rememberNotOnWhatsApp(em: EntityManager, userId: string, phone: string): Promise<void> {
    await rows(
      em,
      `INSERT INTO not_on_whatsapp (user_id, phone) VALUES ($1, $2) ON CONFLICT (user_id, phone) DO UPDATE SET at = now()`,
      [userId, phone],
    );
  }

  // ---- outcomes

  /**
   * Messages sent, recorded and their lanes rescheduled, for a batch of steps in one statement: each
   * record's `slot` and `counters` apply only when its outcome did (the recipient was still `sending`);
   * otherwise its lane is rescheduled as after nothing. Answers in the order of `records`: `job` is the
   * job as counted (undefined when the outcome did not apply), `lane` undefined when `workerId` no
   * longer holds it.
   */
  async recordSentMany(
    em: EntityManager,
    workerId: string,
    records: SentRecord[],
  ): Promise<Array<{ job: LaneJob | undefined; lane: Rescheduled | undefined }>> {
    // Per record, the reschedule's values as columns of `a`, the request rows with whether their outcome
    // applied (the worker is one parameter for all).
    const perRecord = RESCHEDULE_KEYS.filter((k) => k !== 'workerId');
    const params = records.map((r) => rescheduleParams(r.send.userId, workerId, r.slot, r.counters));
    const values = {
      ...Object.fromEntries(perRecord.map((k) => [k, `a."p_${k}"`])),
      workerId: '$1',
    } as RescheduleValues;
    const types = {
      userId: 'text',
      notBeforeSecs: 'float8',
      exactly: 'timestamptz',
      floor: 'timestamptz',
      setDay: 'boolean',
      dayKey: 'text',
      dayCount: 'integer',
      runCount: 'integer',
      warmUpFrom: 'text',
      engineFailures: 'integer',
    };
    const found = await rows<Record<string, unknown> & { i: string }>(
      em,
      `WITH req AS (
         SELECT * FROM unnest($2::uuid[], $3::integer[], $4::timestamptz[], $5::integer[], $6::boolean[], ${perRecord.map((k, i) => `$${7 + i}::${types[k as keyof typeof types]}[]`).join(', ')})
                WITH ORDINALITY AS r(p_job_id, p_seq, p_at, p_paced, p_keep, ${perRecord.map((k) => `"p_${k}"`).join(', ')}, p_i)
       ), ${recordSentCtes('req')}, ${APPLIED_SENDS_CTE},
       lane AS (${rescheduleSql(values, 'a.applied', 'FROM applied a', 'a.p_i, ', 'NOT a.p_keep')}),
       -- A lane left as its take wrote it: read, with the slot its send sets (this statement's own
       -- update of the recipient is not visible to the lane's slot expression).
       kept AS (
         SELECT a.p_i, greatest(${laneSlotSql('l')}, CASE WHEN a.applied THEN a.p_at + make_interval(secs => a.p_paced / 1000.0) END) AS "nextSendAt"
           FROM applied a JOIN lanes l ON l.user_id = a."p_userId" AND l.holder = $1 WHERE a.p_keep
       ), slots AS (
         SELECT p_i, "nextSendAt", "waitMs" FROM lane
         UNION ALL
         SELECT p_i, "nextSendAt", ${msUntilSql('"nextSendAt"')} FROM kept
       )
       SELECT req.p_i AS i, ${LANE_JOB_KEYS.map((k) => `counted."${k}" AS "job_${k}"`).join(', ')}, slots."nextSendAt" AS "lane_nextSendAt", slots."waitMs" AS "lane_waitMs"
         FROM req LEFT JOIN counted ON counted.p_i = req.p_i LEFT JOIN slots ON slots.p_i = req.p_i`,
      [
        workerId,
        records.map((r) => r.send.jobId),
        records.map((r) => r.send.seq),
        records.map((r) => r.at),
        records.map((r) => r.pacedMs),
        records.map((r) => r.keepLane),
        ...perRecord.map((k) => params.map((p) => p[RESCHEDULE_KEYS.indexOf(k)])),
      ],
      STEP_PREPARED,
    );
    return inInputOrder(found, records.length).map((f) => {
      const lane = f?.lane_nextSendAt
        ? { nextSendAt: f.lane_nextSendAt as Date, waitMs: f.lane_waitMs as number }
        : undefined;
      return { job: f ? fieldsOf<LaneJob>(f, LANE_JOB_KEYS, 'job_') : undefined, lane };
    });
  }

  /** One sent message recorded outside a step (`recordSentMany` records the step's); false when it was not in flight. `pacedMs`: the gap planned after it. */
  async markSent(
    em: EntityManager,
    jobId: string,
    seq: number,
    at: Date,
    pacedMs: number | null = null,
  ): Promise<boolean> {
    const done = await rows(
      em,
      `WITH ${NAMED_CTES}
       UPDATE job_recipients r SET state = 'sent', in_flight = false, done_at = $3, error = NULL, paced_ms = $4
        WHERE job_id = $1 AND seq = $2 AND ${inFlightSql('r', NAMED)} RETURNING 1`,
      [jobId, seq, at, pacedMs],
    );
    return done.length > 0;
  }

  /**
   * Records a recipient's failure and counts it in its job, in one statement: the recipient (still
   * in flight: a worker that lost its lane records nothing) becomes failed, and the job is counted: it
   * completes with its last recipient, skipped ones counted (sent + failed + skipped reaches total; a
   * cancelled job stays cancelled). Returns the job as counted, or undefined when the recipient was
   * not in flight (nothing changed).
   */
  recordFailed(em: EntityManager, jobId: string, seq: number, error: string): Promise<LaneJob | undefined> {
    return row<LaneJob>(
      em,
      `WITH ${NAMED_CTES},
            done AS (UPDATE job_recipients r SET state = 'failed', in_flight = false, attempts = attempts + 1, error = $3, done_at = now()
                      WHERE job_id = $1 AND seq = $2 AND ${inFlightSql('r', NAMED)} RETURNING 1),
            counted AS (${countOutcomeSql('failed')} WHERE id = $1 AND EXISTS (SELECT 1 FROM done) RETURNING ${LANE_JOB})
       SELECT * FROM counted`,
      [jobId, seq, error],
    );
  }

  /** A temporary failure: back to pending with one more attempt, not before `afterMs`. */
  async retryLater(em: EntityManager, jobId: string, seq: number, error: string, afterMs: number): Promise<boolean> {
    const back = await rows(
      em,
      `WITH ${NAMED_CTES}
       UPDATE job_recipients r SET state = 'pending', in_flight = false, attempts = attempts + 1, error = $3,
              next_attempt_at = now() + make_interval(secs => $4)
        WHERE job_id = $1 AND seq = $2 AND ${inFlightSql('r', NAMED)} RETURNING 1`,
      [jobId, seq, error, afterMs / 1000],
    );
    return back.length > 0;
  }

  /** Back to pending without using an attempt (the account, not the number, was the problem). */
  async release(em: EntityManager, jobId: string, seq: number): Promise<void> {
    await rows(
      em,
      `WITH ${NAMED_CTES}
       UPDATE job_recipients r SET state = 'pending', in_flight = false WHERE job_id = $1 AND seq = $2 AND ${inFlightSql('r', NAMED)}`,
      [jobId, seq],
    );
  }

  /**
   * After a send's outcome, the lane's next slot: with `exactly`, that time (a duplicate: nothing left
   * now, so only the gap to the earlier send counts; never in the past, never later than booked);
   * otherwise the latest of what was booked, now + `notBeforeMs` (retries and pauses) and `floor` (the
   * real send time plus the pace); the paced slot too, so a later sleep does not lose it. Undefined
   * when `workerId` no longer holds the lane. `counters` put back what the take counted when nothing
   * went out; `uncountDay`, the day on which the take counted a message to a number that never replied.
   */
  reschedule(
    em: EntityManager,
    userId: string,
    workerId: string,
    slot: LaneSlot,
    counters?: Partial<LaneCounters>,
    uncountDay?: string,
  ): Promise<Rescheduled | undefined> {
    const params = rescheduleParams(userId, workerId, slot, counters);
    if (uncountDay === undefined) return row(em, rescheduleSql(rescheduleAt(1), 'true'), params);
    const uncount = `$${params.length + 1}::text`;
    return row(em, rescheduleSql(rescheduleAt(1), 'true', '', '', 'true', uncount), [...params, uncountDay]);
  }
}
