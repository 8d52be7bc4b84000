import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * How many contacts each user keeps, without counting the rows: every statement that inserts or deletes
 * contacts appends one row per user to `contact_count_deltas` (statement-level triggers with transition
 * tables, so a 100,000-row import adds one row per statement, not per contact). Appending never waits on
 * another transaction's lock, so a delete running beside an import cannot deadlock with it; readers sum
 * the user's rows, and writes that hold the user's contacts lock fold them into one row now and then.
 */
export class CountContactsPerUser1797600000000 implements MigrationInterface {
  name = 'CountContactsPerUser1797600000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE contacts.contact_count_deltas (
        id bigserial PRIMARY KEY,
        user_id text NOT NULL,
        n integer NOT NULL
      )`);
    await q.query(`CREATE INDEX contact_count_deltas_user_idx ON contacts.contact_count_deltas (user_id) INCLUDE (n)`);
    await q.query(`
      CREATE FUNCTION contacts.count_inserted_contacts() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        INSERT INTO contacts.contact_count_deltas (user_id, n) SELECT user_id, count(*) FROM inserted GROUP BY user_id;
        RETURN NULL;
      END $$`);
    await q.query(`
      CREATE FUNCTION contacts.count_deleted_contacts() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        INSERT INTO contacts.contact_count_deltas (user_id, n) SELECT user_id, -count(*) FROM deleted GROUP BY user_id;
        RETURN NULL;
      END $$`);
    await q.query(`
      CREATE TRIGGER contacts_counted_on_insert AFTER INSERT ON contacts.contacts
        REFERENCING NEW TABLE AS inserted FOR EACH STATEMENT EXECUTE FUNCTION contacts.count_inserted_contacts()`);
    await q.query(`
      CREATE TRIGGER contacts_counted_on_delete AFTER DELETE ON contacts.contacts
        REFERENCING OLD TABLE AS deleted FOR EACH STATEMENT EXECUTE FUNCTION contacts.count_deleted_contacts()`);
    // A user's contacts never move to another user (no statement updates user_id): inserts and deletes are all.
    await q.query(
      `INSERT INTO contacts.contact_count_deltas (user_id, n) SELECT user_id, count(*) FROM contacts.contacts GROUP BY user_id`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TRIGGER contacts_counted_on_delete ON contacts.contacts`);
    await q.query(`DROP TRIGGER contacts_counted_on_insert ON contacts.contacts`);
    await q.query(`DROP FUNCTION contacts.count_deleted_contacts()`);
    await q.query(`DROP FUNCTION contacts.count_inserted_contacts()`);
    await q.query(`DROP TABLE contacts.contact_count_deltas`);
  }
}
