import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * WhatsApp more and more names people by a LID (`<digits>@lid`) instead of their number. What each
 * account learned of which LID is which number is kept per user, so a reply or a STOP that arrives with
 * a LID only still reaches the recipient it answers.
 */
export class LidPhones1797900000000 implements MigrationInterface {
  name = 'LidPhones1797900000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE sessions.lid_phones (
        user_id text NOT NULL,
        lid text NOT NULL,
        phone text NOT NULL,
        learned_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (user_id, lid)
      )`);
    await q.query(`CREATE INDEX lid_phones_user_phone_idx ON sessions.lid_phones (user_id, phone)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE sessions.lid_phones`);
  }
}
