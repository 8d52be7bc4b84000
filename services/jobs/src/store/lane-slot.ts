/**
 * The lane `l`'s next slot, as SQL: its booked `next_send_at`, or later, the slot its last send set,
 * when the lane still names that send and it went out (its `done_at` plus the gap planned after it,
 * `paced_ms`, the policy's long pause included). A plain send's record leaves the lane as its take
 * wrote it (one lane write per message): the recipient's row, written anyway, carries the slot.
 *
 * The recipient is looked up by its key alone, its state tested on the row: with `state = 'sent'` in
 * the condition, a plan made while the job's recipients were all pending reads the sent ones through
 * `job_recipients_done_idx` instead, every sent row of the job for each step.
 */
export const laneSlotSql = (l: string) =>
  `greatest(${l}.next_send_at, (SELECT CASE WHEN s.state = 'sent' THEN s.done_at + make_interval(secs => s.paced_ms / 1000.0) END
                                  FROM job_recipients s WHERE s.job_id = ${l}.sending_job AND s.seq = ${l}.sending_seq))`;

/** Milliseconds from now (the statement's clock) until the time `at`, SQL; 0 when it is past. */
export const msUntilSql = (at: string) => `greatest(0, extract(epoch FROM ${at} - clock_timestamp()) * 1000)::float8`;
