import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Replies: what recipients wrote back, and on each message the first answer to it. The
 * inbound text is personal data and lives only here, in the dashboard's read model.
 *
 * 200 is LIMITS.replyPreviewMax, written out because an applied migration never changes; the schema
 * test compares the migrated column with LIMITS and the entity.
 */
export class AddReplies1795411802762 implements MigrationInterface {
  name = 'AddReplies1795411802762';

  async up(q: QueryRunner): Promise<void> {
    // Every message received in a one-to-one chat. reply_to is the message it answers, once that
    // message is known (the answer's event may be applied before the send's).
    await q.query(`
      CREATE TABLE dashboard.inbound_messages (
        user_id text NOT NULL,
        message_id text NOT NULL,
        from_number text NOT NULL,
        text text NOT NULL,
        received_at timestamptz NOT NULL,
        reply_to bigint REFERENCES dashboard.messages (id) ON DELETE SET NULL,
        PRIMARY KEY (user_id, message_id)
      )`);
    // Answers still looking for the message they answer, by sender.
    await q.query(`
      CREATE INDEX inbound_messages_unmatched_idx ON dashboard.inbound_messages (user_id, from_number, received_at)
        WHERE reply_to IS NULL`);
    // The messages sent to one number, newest first: where an answer finds the message it answers.
    await q.query(`CREATE INDEX messages_user_recipient_idx ON dashboard.messages (user_id, recipient, sent_at DESC)`);
    await q.query(`ALTER TABLE dashboard.messages ADD COLUMN replied_at timestamptz, ADD COLUMN reply varchar(200)`);
    await q.query(`ALTER TABLE dashboard.user_totals ADD COLUMN replied bigint NOT NULL DEFAULT 0`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE dashboard.user_totals DROP COLUMN replied`);
    await q.query(`ALTER TABLE dashboard.messages DROP COLUMN reply, DROP COLUMN replied_at`);
    await q.query(`DROP INDEX dashboard.messages_user_recipient_idx`);
    await q.query(`DROP TABLE dashboard.inbound_messages`);
  }
}
