import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A lane's row is updated twice per message (its slot booked, then rescheduled). With `next_send_at`
 * in an index, none of those updates was HOT: each left a new row version on another page and new
 * entries in both indexes (measured: 195 HOT of 48,548 lane updates in jobs-throughput, the table at
 * 3 MB for 200 lanes). The index that finds due lanes now holds only the active lanes' ids, a column
 * that never changes, and pages keep room for the next version, so a step's updates stay on their
 * page and leave the indexes alone. A poll sorts the active lanes it finds by their slot.
 */
export class LaneHotUpdates1796100000000 implements MigrationInterface {
  name = 'LaneHotUpdates1796100000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE INDEX lanes_active_idx ON jobs.lanes (user_id) WHERE active`);
    await q.query(`DROP INDEX jobs.lanes_due_idx`);
    await q.query(`ALTER TABLE jobs.lanes SET (fillfactor = 50)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE jobs.lanes RESET (fillfactor)`);
    await q.query(`CREATE INDEX lanes_due_idx ON jobs.lanes (next_send_at) WHERE active`);
    await q.query(`DROP INDEX jobs.lanes_active_idx`);
  }
}
