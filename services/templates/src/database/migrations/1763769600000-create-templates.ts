import type { MigrationInterface, QueryRunner } from 'typeorm';

export class CreateTemplates1763769600000 implements MigrationInterface {
  name = 'CreateTemplates1763769600000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE templates.templates (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        user_id text NOT NULL,
        name varchar(100) NOT NULL,
        description varchar(500) NOT NULL DEFAULT '',
        message_content varchar(1000) NOT NULL,
        phone_numbers text[] NOT NULL DEFAULT '{}',
        category text NOT NULL DEFAULT 'general'
          CHECK (category IN ('general', 'marketing', 'personal', 'business', 'custom')),
        is_favorite boolean NOT NULL DEFAULT false,
        usage_count integer NOT NULL DEFAULT 0 CHECK (usage_count >= 0),
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    // The list is "newest first" per user, optionally by category and favorites.
    await q.query(`CREATE INDEX templates_user_created_idx ON templates.templates (user_id, created_at DESC)`);
    await q.query(`CREATE INDEX templates_user_category_idx ON templates.templates (user_id, category, created_at DESC)`);
    await q.query(`CREATE INDEX templates_user_favorite_idx ON templates.templates (user_id, created_at DESC) WHERE is_favorite`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE templates.templates`);
  }
}
