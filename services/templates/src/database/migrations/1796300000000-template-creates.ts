import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The `Idempotency-Key` of each create that carried one: a create answered 503 (the service was slow,
 * the write went through after the gateway gave up) and tried again with the same key gets the
 * template the first try stored, not a second one. A deleted template takes its key with it.
 */
export class TemplateCreates1796300000000 implements MigrationInterface {
  name = 'TemplateCreates1796300000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE templates.template_creates (
        user_id text NOT NULL,
        idempotency_key text NOT NULL,
        template_id uuid NOT NULL REFERENCES templates.templates (id) ON DELETE CASCADE,
        created_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (user_id, idempotency_key)
      )`);
    await q.query(`CREATE INDEX template_creates_template_idx ON templates.template_creates (template_id)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE templates.template_creates`);
  }
}
