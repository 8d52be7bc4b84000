import { describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { isMintedJobId, jobMayExist, JOB_ID_KEY_BYTES, mintJobId } from '@bns/service-kit';
import { JobIdScheme1796500000000 } from '../migrations/1796500000000-job-id-scheme.js';
import { migratedDatabase } from './migrated-database.js';

/**
 * Job ids the gateway can check without asking the jobs service: the migration makes one key per deployment, says whether
 * jobs with older (random) ids exist, and from then on lets only version 8 ids into `jobs.jobs`.
 */
describe('migration JobIdScheme1796500000000', () => {
  const db = migratedDatabase(JobIdScheme1796500000000);

  const scheme = async () => {
    const rows = (await db().query(`SELECT key, legacy_ids FROM jobs.job_id_scheme`)) as {
      key: Buffer;
      legacy_ids: boolean;
    }[];
    expect(rows).toHaveLength(1);
    return { key: rows[0]!.key, legacyIds: rows[0]!.legacy_ids };
  };
  const insertJob = (id: string, userId = 'user_ids') =>
    db().query(
      `INSERT INTO jobs.jobs (id, user_id, message, total, delay_ms, estimated_minutes, status) VALUES ($1, $2, 'hi', 1, 0, 0, 'completed')`,
      [id, userId],
    );

  it('a new deployment: a random key, no legacy ids, and a version 4 id is refused by the table', async () => {
    const fresh = await scheme();
    expect(fresh.key).toHaveLength(JOB_ID_KEY_BYTES);
    expect(fresh.legacyIds).toBe(false);
    await expect(insertJob(randomUUID())).rejects.toThrow(/jobs_id_minted/);
    const minted = mintJobId(fresh.key, 'user_ids');
    await insertJob(minted);
    expect(jobMayExist(fresh, 'user_ids', minted)).toBe(true);
    expect(jobMayExist(fresh, 'user_other', minted)).toBe(false);
  });

  it('an upgrade with jobs of random ids: they stay and may exist, and so may new ones (a replica of the earlier version mid-rollout); a second key is never made', async () => {
    const before = await scheme();
    await db().undoLastMigration();
    expect(await db().query(`SELECT to_regclass('jobs.job_id_scheme') AS t`)).toEqual([{ t: null }]);
    const legacy = randomUUID();
    await insertJob(legacy);
    await db().runMigrations();

    const after = await scheme();
    expect(after.legacyIds).toBe(true);
    expect(after.key.equals(before.key)).toBe(false);
    expect(jobMayExist(after, 'user_ids', legacy)).toBe(true);
    // The old rows stay; a replica of the earlier version can still start jobs while the rollout lasts.
    expect(await db().query(`SELECT count(*)::int AS n FROM jobs.jobs WHERE id = $1`, [legacy])).toEqual([{ n: 1 }]);
    const lateLegacy = randomUUID();
    await insertJob(lateLegacy);
    expect(jobMayExist(after, 'user_ids', lateLegacy)).toBe(true);
    await expect(
      db().query(`INSERT INTO jobs.job_id_scheme (id, key, legacy_ids) VALUES (2, $1, false)`, [after.key]),
    ).rejects.toThrow();
    expect(isMintedJobId(after.key, 'user_ids', mintJobId(after.key, 'user_ids'))).toBe(true);
  });
});
