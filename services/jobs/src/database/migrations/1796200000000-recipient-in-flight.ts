import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A recipient's take marked it `state = 'sending'`, and `state` is in three of the table's indexes
 * (the open list, the done list, the sent numbers), so neither that update nor the outcome's after it
 * could be HOT: each message left two new row versions with entries in every index. In
 * flight is now a flag no index holds, so the take's mark stays on its page; a page keeps room for it.
 * Rows marked `sending` by a replica of the earlier version still count as in flight (`inFlightSql`),
 * so nothing is converted here and a rolling upgrade takes their sends over as they are.
 */
export class RecipientInFlight1796200000000 implements MigrationInterface {
  name = 'RecipientInFlight1796200000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE jobs.job_recipients ADD COLUMN in_flight boolean NOT NULL DEFAULT false`);
    await q.query(`ALTER TABLE jobs.job_recipients SET (fillfactor = 85)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`UPDATE jobs.job_recipients SET state = 'sending' WHERE in_flight AND state = 'pending'`);
    await q.query(`ALTER TABLE jobs.job_recipients RESET (fillfactor)`);
    await q.query(`ALTER TABLE jobs.job_recipients DROP COLUMN in_flight`);
  }
}
