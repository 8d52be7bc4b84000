/**
 * The lane `l`'s next slot, as SQL: its booked `next_send_at`, or later, the slot its last send set,
 * when the lane still names that send and it went out (its `done_at` plus the gap planned after it,
 * `paced_ms`, the policy's long pause included). A plain send's record leaves the lane as its take
 * wrote it (one lane write per message): the recipient's row, written anyway, carries the slot.
 */
export const laneSlotSql = (l: string) =>
  `greatest(${l}.next_send_at, (SELECT s.done_at + make_interval(secs => s.paced_ms / 1000.0) FROM job_recipients s
                                 WHERE s.job_id = ${l}.sending_job AND s.seq = ${l}.sending_seq AND s.state = 'sent'))`;
