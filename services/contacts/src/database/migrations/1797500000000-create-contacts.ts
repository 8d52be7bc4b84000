import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The contact book, its segments, the facts other services report by events, and the inbox threads.
 * Limits (CONTACTS_LIMITS) are checked by the service; the table keeps its own sanity checks. Facts are
 * kept per number, not per contact: deleting a contact forgets none of them (an opt-out stays an
 * opt-out), and a fact that arrives before the number is a contact is there when it becomes one.
 */
export class CreateContacts1797500000000 implements MigrationInterface {
  name = 'CreateContacts1797500000000';

  async up(q: QueryRunner): Promise<void> {
    // What a search looks in: the number, the name, the tags and every field's value, lower-cased.
    await q.query(`
      CREATE FUNCTION contacts.contact_search_text(phone text, name text, fields jsonb, tags text[])
      RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
        SELECT lower(phone || ' ' || coalesce(name, '') || ' ' || array_to_string(tags, ' ') || ' ' ||
          coalesce((SELECT string_agg(value, ' ') FROM jsonb_each_text(fields)), ''))
      $$`);
    await q.query(`
      CREATE TABLE contacts.contacts (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        user_id text NOT NULL,
        phone varchar(8) NOT NULL CHECK (phone ~ '^[0-9]{8}$'),
        name text,
        fields jsonb NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(fields) = 'object'),
        tags text[] NOT NULL DEFAULT '{}',
        source text NOT NULL CHECK (source IN ('import', 'campaign', 'api', 'reply')),
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        search text GENERATED ALWAYS AS (contacts.contact_search_text(phone, name, fields, tags)) STORED,
        UNIQUE (user_id, phone)
      )`);
    // Pages are newest first (id breaks ties: an import creates many rows at the same instant).
    await q.query(`CREATE INDEX contacts_user_created_idx ON contacts.contacts (user_id, created_at DESC, id DESC)`);
    await q.query(`CREATE INDEX contacts_tags_idx ON contacts.contacts USING gin (tags)`);
    // Substring search (`LIKE '%q%'`) through trigrams when the database has pg_trgm (a trusted
    // extension: the schema's owner may create it); without it a search reads the user's rows.
    const [ext] = (await q.query(
      `SELECT n.nspname AS schema FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'pg_trgm'`,
    )) as { schema: string }[];
    let trgmSchema = ext?.schema;
    if (!trgmSchema) {
      await q.query(`SAVEPOINT trgm`);
      try {
        await q.query(`CREATE EXTENSION pg_trgm WITH SCHEMA contacts`);
        trgmSchema = 'contacts';
      } catch {
        await q.query(`ROLLBACK TO SAVEPOINT trgm`);
      }
    }
    if (trgmSchema) {
      await q.query(
        `CREATE INDEX contacts_search_idx ON contacts.contacts USING gin (search "${trgmSchema}".gin_trgm_ops)`,
      );
    }

    await q.query(`
      CREATE TABLE contacts.phone_facts (
        user_id text NOT NULL,
        phone varchar(8) NOT NULL,
        opted_out_at timestamptz,
        not_on_whatsapp_at timestamptz,
        last_messaged_at timestamptz,
        last_delivered_at timestamptz,
        last_read_at timestamptz,
        last_replied_at timestamptz,
        PRIMARY KEY (user_id, phone)
      )`);
    // What happened to each number in each campaign: the follow-up segments read it.
    await q.query(`
      CREATE TABLE contacts.campaign_outcomes (
        user_id text NOT NULL,
        job_id uuid NOT NULL,
        phone varchar(8) NOT NULL,
        messaged_at timestamptz,
        delivered_at timestamptz,
        read_at timestamptz,
        replied_at timestamptz,
        failed_at timestamptz,
        PRIMARY KEY (user_id, job_id, phone)
      )`);
    await q.query(`CREATE INDEX campaign_outcomes_phone_idx ON contacts.campaign_outcomes (user_id, phone)`);

    await q.query(`
      CREATE TABLE contacts.segments (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        user_id text NOT NULL,
        name text NOT NULL,
        rule jsonb NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX segments_user_idx ON contacts.segments (user_id, created_at DESC)`);

    await q.query(`
      CREATE TABLE contacts.settings (
        user_id text PRIMARY KEY,
        save_recipients boolean NOT NULL DEFAULT true
      )`);

    // The inbox: every message to and from a number, deduplicated by the event's own key.
    await q.query(`
      CREATE TABLE contacts.messages (
        id bigserial PRIMARY KEY,
        user_id text NOT NULL,
        phone varchar(8) NOT NULL,
        direction text NOT NULL CHECK (direction IN ('in', 'out')),
        key text NOT NULL,
        text text NOT NULL,
        at timestamptz NOT NULL,
        status text,
        job_id uuid,
        UNIQUE (user_id, key)
      )`);
    await q.query(`CREATE INDEX messages_thread_idx ON contacts.messages (user_id, phone, at DESC, id DESC)`);
    await q.query(`
      CREATE TABLE contacts.conversations (
        user_id text NOT NULL,
        phone varchar(8) NOT NULL,
        last_direction text NOT NULL,
        last_text text NOT NULL,
        last_at timestamptz NOT NULL,
        unread integer NOT NULL DEFAULT 0,
        last_job_id uuid,
        PRIMARY KEY (user_id, phone)
      )`);
    await q.query(
      `CREATE INDEX conversations_list_idx ON contacts.conversations (user_id, (unread > 0) DESC, last_at DESC)`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    for (const t of [
      'conversations',
      'messages',
      'settings',
      'segments',
      'campaign_outcomes',
      'phone_facts',
      'contacts',
    ])
      await q.query(`DROP TABLE contacts.${t}`);
    await q.query(`DROP FUNCTION contacts.contact_search_text(text, text, jsonb, text[])`);
  }
}
