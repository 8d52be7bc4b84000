import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A transactional job (one message sent through POST /v1/messages) is taken before the account's other
 * open jobs: a reminder must not wait behind a 50,000-row campaign. Pacing, caps, windows and
 * opt-outs still apply to it; only the order changes.
 */
export class TransactionalJobs1797100000000 implements MigrationInterface {
  name = 'TransactionalJobs1797100000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE jobs.jobs ADD COLUMN transactional boolean NOT NULL DEFAULT false`);
    // The lane's pick of the next job reads this index in its order: transactional ones first.
    await q.query(`DROP INDEX jobs.jobs_user_active_idx`);
    await q.query(
      `CREATE INDEX jobs_user_active_idx ON jobs.jobs (user_id, transactional DESC, created_at, id) WHERE status IN ('queued', 'scheduled', 'running', 'paused')`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX jobs.jobs_user_active_idx`);
    await q.query(
      `CREATE INDEX jobs_user_active_idx ON jobs.jobs (user_id, created_at, id) WHERE status IN ('queued', 'scheduled', 'running', 'paused')`,
    );
    await q.query(`ALTER TABLE jobs.jobs DROP COLUMN transactional`);
  }
}
