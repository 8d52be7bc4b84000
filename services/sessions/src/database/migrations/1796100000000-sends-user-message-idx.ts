import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Receipts find their send by (user, message id). With an index on the message id alone, the planner
 * (on young statistics) joined it with the primary key's scan of all of the user's sends, so every
 * receipt cost more as the user's history grew. One index on both columns answers it in one probe.
 */
export class SendsUserMessageIdx1796100000000 implements MigrationInterface {
  name = 'SendsUserMessageIdx1796100000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `CREATE INDEX sends_user_message_idx ON sessions.sends (user_id, message_id) WHERE message_id IS NOT NULL`,
    );
    await q.query(`DROP INDEX sessions.sends_message_id_idx`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`CREATE INDEX sends_message_id_idx ON sessions.sends (message_id) WHERE message_id IS NOT NULL`);
    await q.query(`DROP INDEX sessions.sends_user_message_idx`);
  }
}
