import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Attachments: one row per user and content (`media`), what holds one besides a job (`media_holds`: a
 * template), and the job's own reference. The bytes are in the JetStream object store, never here; a
 * job keeps a copy of the reference (`media`), so its report still names the file after the retention
 * clean-up has deleted it.
 */
export class Media1797800000000 implements MigrationInterface {
  name = 'Media1797800000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE jobs.media (
        id text PRIMARY KEY,
        user_id text NOT NULL,
        sha256 text NOT NULL,
        object text NOT NULL,
        kind text NOT NULL CHECK (kind IN ('image', 'video', 'audio', 'document')),
        mime text NOT NULL,
        size bigint NOT NULL CHECK (size > 0),
        file_name text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        last_used_at timestamptz NOT NULL DEFAULT now(),
        UNIQUE (user_id, sha256)
      )`);
    await q.query(`CREATE INDEX media_last_used_idx ON jobs.media (last_used_at)`);
    await q.query(`
      CREATE TABLE jobs.media_holds (
        user_id text NOT NULL,
        holder text NOT NULL,
        media_id text NOT NULL REFERENCES jobs.media (id) ON DELETE CASCADE,
        PRIMARY KEY (user_id, holder)
      )`);
    await q.query(`CREATE INDEX media_holds_media_idx ON jobs.media_holds (media_id)`);
    await q.query(`ALTER TABLE jobs.jobs ADD COLUMN media_id text`);
    await q.query(`ALTER TABLE jobs.jobs ADD COLUMN media jsonb`);
    await q.query(
      `CREATE INDEX jobs_media_active_idx ON jobs.jobs (media_id) WHERE media_id IS NOT NULL AND status IN ('queued', 'scheduled', 'running', 'paused')`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX jobs.jobs_media_active_idx`);
    await q.query(`ALTER TABLE jobs.jobs DROP COLUMN media`);
    await q.query(`ALTER TABLE jobs.jobs DROP COLUMN media_id`);
    await q.query(`DROP TABLE jobs.media_holds`);
    await q.query(`DROP TABLE jobs.media`);
  }
}
