/** SQL conditions on a row of `jobs.job_recipients`, shared by the statements that take, record and skip recipients. */

/**
 * A recipient taken for sending whose outcome is not recorded yet ("sending"), as SQL on the row `r`.
 * It is the `in_flight` flag, not a `state`: `state` is in the table's indexes, so a change of it is
 * never a HOT update, and the take's mark cost a new row version in every index. A row a
 * replica of an earlier version marked (`state = 'sending'`) counts as in flight too, so a rolling
 * upgrade takes over its sends as they are.
 */
export function inFlightSql(r: string): string {
  return `(${r}.in_flight OR ${r}.state = 'sending')`;
}

/** Waiting to be sent and not in flight (what a mid-job opt-out may still move to the skips), as SQL on the row `r`. */
export function waitingSql(r: string): string {
  return `(${r}.state = 'pending' AND NOT ${r}.in_flight)`;
}
