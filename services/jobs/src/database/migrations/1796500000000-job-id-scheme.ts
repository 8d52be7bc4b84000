import { randomBytes } from 'node:crypto';
import type { MigrationInterface, QueryRunner } from 'typeorm';
import { JOB_ID_KEY_BYTES } from '@bns/service-kit';

/**
 * Job ids the gateway can check without asking (service-kit `JobIdScheme`): the MAC key they are made with,
 * made once here, and whether jobs made before (random version 4 ids) exist. From now on every new job
 * id is version 8: the constraint holds for new rows only (NOT VALID), so the older ids stay as they are.
 */
export class JobIdScheme1796500000000 implements MigrationInterface {
  name = 'JobIdScheme1796500000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE jobs.job_id_scheme (
        id smallint PRIMARY KEY DEFAULT 1 CHECK (id = 1),
        key bytea NOT NULL CHECK (octet_length(key) = ${JOB_ID_KEY_BYTES}),
        legacy_ids boolean NOT NULL
      )`);
    const [{ legacy }] = (await q.query(
      `INSERT INTO jobs.job_id_scheme (key, legacy_ids) SELECT decode($1, 'hex'), EXISTS (SELECT 1 FROM jobs.jobs) RETURNING legacy_ids AS legacy`,
      [randomBytes(JOB_ID_KEY_BYTES).toString('hex')],
    )) as [{ legacy: boolean }];
    if (!legacy)
      await q.query(
        `ALTER TABLE jobs.jobs ADD CONSTRAINT jobs_id_minted CHECK (substr(id::text, 15, 1) = '8') NOT VALID`,
      );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE jobs.jobs DROP CONSTRAINT IF EXISTS jobs_id_minted`);
    await q.query(`DROP TABLE jobs.job_id_scheme`);
  }
}
