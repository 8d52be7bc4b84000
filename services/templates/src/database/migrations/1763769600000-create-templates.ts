import type { MigrationInterface, QueryRunner } from 'typeorm';

export class CreateTemplates1763769600000 implements MigrationInterface {
  name = 'CreateTemplates1763769600000';

  async up(q: QueryRunner): Promise<void> {
    // Limits are the spec's (SPEC §9): LIMITS.templateNameMax, templateDescriptionMax, templateMessageMax
    // and templatePhoneNumbersMax. They are written out because an applied migration must never change;
    // the schema test compares the migrated table with LIMITS and the entity, so a new limit fails it
    // until a migration alters the table. The service validates first, these keep the table honest.
    await q.query(`
      CREATE TABLE templates.templates (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        user_id text NOT NULL,
        name varchar(100) NOT NULL CHECK (btrim(name) <> ''),
        description varchar(500) NOT NULL DEFAULT '',
        message_content varchar(1000) NOT NULL CHECK (btrim(message_content) <> ''),
        phone_numbers text[] NOT NULL DEFAULT '{}' CHECK (cardinality(phone_numbers) <= 200),
        category text NOT NULL DEFAULT 'general'
          CHECK (category IN ('general', 'marketing', 'personal', 'business', 'custom')),
        is_favorite boolean NOT NULL DEFAULT false,
        usage_count integer NOT NULL DEFAULT 0 CHECK (usage_count >= 0),
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    // The list is newest first per user (id breaks ties), optionally one category and/or favorites only.
    await q.query(`CREATE INDEX templates_user_created_idx ON templates.templates (user_id, created_at DESC, id DESC)`);
    await q.query(
      `CREATE INDEX templates_user_category_idx ON templates.templates (user_id, category, created_at DESC, id DESC)`,
    );
    await q.query(
      `CREATE INDEX templates_user_favorite_idx ON templates.templates (user_id, created_at DESC, id DESC) WHERE is_favorite`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE templates.templates`);
  }
}
