import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A template's attachment: the id of one of the user's attachments, which the jobs service owns and
 * keeps while the template holds it. No foreign key: the attachments live in the jobs service's schema.
 */
export class TemplateMedia1797900000000 implements MigrationInterface {
  name = 'TemplateMedia1797900000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE templates.templates ADD COLUMN media_id text`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE templates.templates DROP COLUMN media_id`);
  }
}
