import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The recipient a lane has taken and whose outcome is not recorded yet is named on the lane's row
 * (`sending_job`, `sending_seq`), not flagged on the recipient's. The take already updates the lane
 * (it books the next slot) and every outcome updates it again (it reschedules), so the mark costs no
 * write of its own; on the recipient it cost a row version per message (campaign-throughput: 4.9
 * writes of job_recipients per message, the take's mark one of them). An account sends one message at
 * a time, so one lane names at most one recipient. Neither column is indexed: the lane's updates stay
 * HOT. `job_recipients.in_flight` stays for rows an earlier version marked, and for the rare take that
 * moves a lane to another job while its mark still names a recipient (LaneStepRepository).
 */
export class LaneInFlight1798900000000 implements MigrationInterface {
  name = 'LaneInFlight1798900000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE jobs.lanes ADD COLUMN sending_job uuid, ADD COLUMN sending_seq integer`);
  }

  async down(q: QueryRunner): Promise<void> {
    // A recipient still named by its lane keeps the mark on its own row.
    await q.query(`
      UPDATE jobs.job_recipients r SET in_flight = true FROM jobs.lanes l
       WHERE r.job_id = l.sending_job AND r.seq = l.sending_seq AND r.state = 'pending'`);
    await q.query(`ALTER TABLE jobs.lanes DROP COLUMN sending_job, DROP COLUMN sending_seq`);
  }
}
