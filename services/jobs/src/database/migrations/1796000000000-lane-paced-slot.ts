import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The lane's paced slot (`paced_at`): the earliest its pace allows the next send, kept apart from
 * `next_send_at`, which a sleep (a scheduled start, a closed window) moves later. A start or resume
 * can then bring a sleeping lane forward to the paced slot, never past it. Lanes from before know no
 * slot (`-infinity`): they may send at once, as they did before this column.
 */
export class LanePacedSlot1796000000000 implements MigrationInterface {
  name = 'LanePacedSlot1796000000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE jobs.lanes ADD COLUMN paced_at timestamptz NOT NULL DEFAULT '-infinity'`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE jobs.lanes DROP COLUMN paced_at`);
  }
}
