import type { MigrationInterface, QueryRunner } from 'typeorm';

export class CreateJobs1763769600000 implements MigrationInterface {
  name = 'CreateJobs1763769600000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE jobs.jobs (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        user_id text NOT NULL,
        status text NOT NULL DEFAULT 'queued',
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX jobs_user_idx ON jobs.jobs (user_id, created_at DESC)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE jobs.jobs`);
  }
}
