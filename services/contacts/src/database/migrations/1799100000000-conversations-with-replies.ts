import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The inbox lists conversations in which the number wrote to us: `last_in_at` (the newest reply) is
 * kept on each conversation, filled from the messages already stored, and a partial index serves the
 * inbox's order (unread first, then the newest) over those conversations only.
 */
export class ConversationsWithReplies1799100000000 implements MigrationInterface {
  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE contacts.conversations ADD COLUMN last_in_at timestamptz`);
    await q.query(`
      UPDATE contacts.conversations v SET last_in_at = m.at
        FROM (SELECT user_id, phone, max(at) AS at FROM contacts.messages WHERE direction = 'in' GROUP BY user_id, phone) m
       WHERE m.user_id = v.user_id AND m.phone = v.phone`);
    await q.query(`DROP INDEX contacts.conversations_list_idx`);
    await q.query(`
      CREATE INDEX conversations_inbox_idx ON contacts.conversations (user_id, (unread > 0) DESC, last_at DESC)
       WHERE last_in_at IS NOT NULL`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX contacts.conversations_inbox_idx`);
    await q.query(
      `CREATE INDEX conversations_list_idx ON contacts.conversations (user_id, (unread > 0) DESC, last_at DESC)`,
    );
    await q.query(`ALTER TABLE contacts.conversations DROP COLUMN last_in_at`);
  }
}
