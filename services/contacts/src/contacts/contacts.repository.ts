import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import type { Contact, ContactInput, ContactPatch, ContactSource, SegmentRule } from '@bns/contracts';
import { rows, Transactions } from '@bns/service-kit';
import { segmentWhere } from '../segments/segment-sql.js';

/** A stored contact joined with its number's facts. */
interface ContactRow {
  id: string;
  phone: string;
  name: string | null;
  fields: Record<string, string>;
  tags: string[];
  source: ContactSource;
  created_at: Date;
  updated_at: Date;
  created_key: string;
  opted_out_at: Date | null;
  not_on_whatsapp_at: Date | null;
  last_messaged_at: Date | null;
  last_delivered_at: Date | null;
  last_read_at: Date | null;
  last_replied_at: Date | null;
}

const iso = (d: Date | null) => (d ? d.toISOString() : null);

function toContact(r: ContactRow): Contact {
  return {
    id: r.id,
    phone: r.phone,
    name: r.name,
    fields: r.fields,
    tags: r.tags,
    source: r.source,
    createdAt: r.created_at.toISOString(),
    updatedAt: r.updated_at.toISOString(),
    facts: {
      optedOutAt: iso(r.opted_out_at),
      notOnWhatsAppAt: iso(r.not_on_whatsapp_at),
      lastMessagedAt: iso(r.last_messaged_at),
      lastDeliveredAt: iso(r.last_delivered_at),
      lastReadAt: iso(r.last_read_at),
      lastRepliedAt: iso(r.last_replied_at),
    },
  };
}

const SELECT = `
  SELECT c.id, c.phone, c.name, c.fields, c.tags, c.source, c.created_at, c.updated_at,
         c.created_at::text AS created_key,
         f.opted_out_at, f.not_on_whatsapp_at, f.last_messaged_at, f.last_delivered_at, f.last_read_at, f.last_replied_at
    FROM contacts c
    LEFT JOIN phone_facts f ON f.user_id = c.user_id AND f.phone = c.phone`;

const FROM_WITH_FACTS = `FROM contacts c LEFT JOIN phone_facts f ON f.user_id = c.user_id AND f.phone = c.phone`;

/** Tags after adding `$2` (first spelling and order kept) or after removing it. */
const TAGS_ADDED = `(SELECT coalesce(array_agg(t ORDER BY o), '{}') FROM (
   SELECT t, min(o) AS o FROM unnest(c.tags || $2::text[]) WITH ORDINALITY AS x(t, o) GROUP BY t) m)`;
const TAGS_REMOVED = `ARRAY(SELECT t FROM unnest(c.tags) WITH ORDINALITY AS x(t, o) WHERE t <> ALL($2::text[]) ORDER BY o)`;

/** How many contacts the user keeps, from the deltas the insert and delete triggers append. */
const COUNT_KEPT = `SELECT coalesce(sum(n), 0)::int AS total FROM contact_count_deltas WHERE user_id = $1`;

/** What a bulk change selects: contacts by id, or what a segment's rule selects now. */
export type BulkSelection = { ids: string[] } | { rule: SegmentRule };

/**
 * A text[] literal of the strings (each quoted, its `"` and `\` escaped): Postgres casts it per row
 * without the subquery a JSON array needs, which cost an import of 100,000 rows about 0.3 s.
 */
const arrayLiteral = (items: readonly string[]) =>
  `{${items.map((t) => `"${t.replace(/["\\]/g, (ch) => `\\${ch}`)}"`).join(',')}}`;

/** `LIKE` pattern of a literal: its own % _ and \ escaped. */
const likeOf = (text: string) => `%${text.toLowerCase().replace(/[\\%_]/g, (ch) => `\\${ch}`)}%`;

export interface ListFilter {
  q?: string;
  tag?: string;
  /** A saved segment's rule: only the contacts it selects. */
  rule?: SegmentRule;
  after?: { createdKey: string; id: string };
  limit: number;
}

/** One row of an import, merged and checked: what the upsert writes. */
export interface ImportRow {
  phone: string;
  name: string | null;
  fields: Record<string, string>;
  tags: string[];
}

/**
 * Every query of the contacts table. Each one is bounded by the owner's id, so another user's contact
 * is indistinguishable from one that does not exist.
 */
@Injectable()
export class ContactsRepository {
  constructor(private readonly tx: Transactions) {}

  /** A page, newest first, and how many match in all. `q` is a substring of number, name, tags or values. */
  async list(userId: string, filter: ListFilter): Promise<{ contacts: Contact[]; total: number; last?: ContactRow }> {
    const where = ['c.user_id = $1'];
    const params: unknown[] = [userId];
    if (filter.q !== undefined && filter.q.trim() !== '') {
      params.push(likeOf(filter.q.trim()));
      where.push(`c.search LIKE $${params.length}`);
    }
    if (filter.tag !== undefined) {
      params.push([filter.tag]);
      where.push(`c.tags @> $${params.length}::text[]`);
    }
    if (filter.rule) where.push(...segmentWhere(filter.rule, params));
    // A rule may ask about the number's facts: then the count needs them too.
    const countFrom = filter.rule ? FROM_WITH_FACTS : 'FROM contacts c';
    const countParams = [...params];
    const countWhere = [...where];
    if (filter.after) {
      params.push(filter.after.createdKey, filter.after.id);
      where.push(`(c.created_at, c.id) < ($${params.length - 1}::timestamptz, $${params.length}::uuid)`);
    }
    params.push(filter.limit + 1);
    const em = this.tx.manager;
    // The whole book's size is kept by triggers; only a filtered page counts its matches.
    const [page, [count]] = await Promise.all([
      rows<ContactRow>(
        em,
        `${SELECT} WHERE ${where.join(' AND ')} ORDER BY c.created_at DESC, c.id DESC LIMIT $${params.length}`,
        params,
      ),
      countWhere.length === 1
        ? rows<{ total: number }>(em, COUNT_KEPT, [userId])
        : rows<{ total: number }>(
            em,
            `SELECT count(*)::int AS total ${countFrom} WHERE ${countWhere.join(' AND ')}`,
            countParams,
          ),
    ]);
    const more = page.length > filter.limit;
    const shown = more ? page.slice(0, filter.limit) : page;
    return { contacts: shown.map(toContact), total: count!.total, ...(more ? { last: shown[shown.length - 1] } : {}) };
  }

  /** The book size's bookkeeping of a deleted account (its contacts are already gone). */
  async forgetCount(userId: string): Promise<void> {
    await rows(this.tx.manager, `DELETE FROM contact_count_deltas WHERE user_id = $1`, [userId]);
  }

  async find(userId: string, id: string, em: EntityManager = this.tx.manager): Promise<Contact | undefined> {
    const [row] = await rows<ContactRow>(em, `${SELECT} WHERE c.user_id = $1 AND c.id = $2`, [userId, id]);
    return row ? toContact(row) : undefined;
  }

  /** The user's lock for writes that count contacts: two creates at once cannot both pass the limit. */
  private async lock(em: EntityManager, userId: string): Promise<void> {
    await em.query(`SELECT pg_advisory_xact_lock(hashtext('bns:contacts:' || $1))`, [userId]);
  }

  /** The user's contact count, its deltas folded into one row (only under the user's lock: see `lock`). */
  private async countFolded(em: EntityManager, userId: string): Promise<number> {
    const [{ n }] = (await em.query(
      `WITH gone AS (DELETE FROM contact_count_deltas WHERE user_id = $1 RETURNING n)
       INSERT INTO contact_count_deltas (user_id, n) SELECT $1, coalesce(sum(n), 0) FROM gone RETURNING n`,
      [userId],
    )) as { n: number }[];
    return n;
  }

  /** A new contact; 'exists' when the number is already in the book, 'full' past `max`. */
  insert(
    userId: string,
    input: ContactInput,
    source: ContactSource,
    max: number,
  ): Promise<Contact | 'exists' | 'full'> {
    return this.tx.run(async (em) => {
      await this.lock(em, userId);
      const n = await this.countFolded(em, userId);
      if (n >= max) return 'full';
      const [created] = await rows<{ id: string }>(
        em,
        `INSERT INTO contacts (user_id, phone, name, fields, tags, source) VALUES ($1, $2, $3, $4, $5, $6)
         ON CONFLICT (user_id, phone) DO NOTHING RETURNING id`,
        [userId, input.phone, input.name || null, input.fields ?? {}, input.tags ?? [], source],
      );
      if (!created) return 'exists';
      return (await this.find(userId, created.id, em))!;
    });
  }

  /** Changes only the given fields; undefined when no such contact, 'exists' when the new number is another's. */
  update(userId: string, id: string, patch: ContactPatch): Promise<Contact | undefined | 'exists'> {
    return this.tx.run(async (em) => {
      const sets: string[] = [];
      const params: unknown[] = [userId, id];
      const set = (column: string, value: unknown) => {
        params.push(value);
        sets.push(`${column} = $${params.length}`);
      };
      if (patch.phone !== undefined) set('phone', patch.phone);
      if (patch.name !== undefined) set('name', patch.name === '' ? null : patch.name);
      if (patch.fields !== undefined) set('fields', patch.fields);
      if (patch.tags !== undefined) set('tags', patch.tags);
      if (patch.phone !== undefined) {
        const [clash] = await rows(em, `SELECT 1 FROM contacts WHERE user_id = $1 AND phone = $2 AND id <> $3`, [
          userId,
          patch.phone,
          id,
        ]);
        if (clash) return 'exists';
      }
      const [found] = await rows<{ id: string }>(
        em,
        `UPDATE contacts SET ${[...sets, 'updated_at = now()'].join(', ')} WHERE user_id = $1 AND id = $2 RETURNING id`,
        params,
      );
      return found ? this.find(userId, id, em) : undefined;
    });
  }

  /**
   * Tags, untags or deletes the selection; answers how many contacts changed. A segment's contacts go
   * `batch` at a time, each batch its own statement (a whole book never holds its rows locked at once);
   * a batch takes only contacts the change still applies to, so the loop ends.
   */
  async bulk(
    userId: string,
    action: 'tag' | 'untag' | 'delete',
    tags: string[],
    selection: BulkSelection,
    batch: number,
  ): Promise<number> {
    // $2 is always the tags (a delete names it too, so every parameter has a type).
    const params: unknown[] = [userId, tags];
    const pending =
      action === 'tag'
        ? `NOT (c.tags @> $2::text[])`
        : action === 'untag'
          ? `c.tags && $2::text[]`
          : `cardinality($2::text[]) >= 0`;
    let chosen: string;
    if ('ids' in selection) {
      params.push(selection.ids);
      chosen = `c.id = ANY($3::uuid[]) AND ${pending}`;
    } else {
      const where = ['c.user_id = $1', pending, ...segmentWhere(selection.rule, params)];
      params.push(batch);
      chosen = `c.id IN (SELECT c.id ${FROM_WITH_FACTS} WHERE ${where.join(' AND ')} LIMIT $${params.length})`;
    }
    const statement =
      action === 'delete'
        ? `DELETE FROM contacts c WHERE c.user_id = $1 AND ${chosen} RETURNING c.id`
        : `UPDATE contacts c SET tags = ${action === 'tag' ? TAGS_ADDED : TAGS_REMOVED}, updated_at = now()
            WHERE c.user_id = $1 AND ${chosen} RETURNING c.id`;
    let affected = 0;
    for (;;) {
      const changed = (await rows(this.tx.manager, statement, params)).length;
      affected += changed;
      if ('ids' in selection || changed < batch) return affected;
    }
  }

  async delete(userId: string, id: string): Promise<boolean> {
    const deleted = await rows(this.tx.manager, `DELETE FROM contacts WHERE user_id = $1 AND id = $2 RETURNING id`, [
      userId,
      id,
    ]);
    return deleted.length > 0;
  }

  /**
   * Upserts every row in one transaction, a few thousand per statement: a new number is created, a
   * known one gets the row's non-empty values (fields merged key by key) and its tags added (a row that
   * changes nothing writes nothing, yet counts as updated). Answers how many were created, or 'full'
   * (nothing written) when the book would pass `max`.
   */
  async importRows(
    userId: string,
    input: readonly ImportRow[],
    statementRows: number,
    max: number,
    analyzeRows = Infinity,
  ): Promise<{ created: number; updated: number } | 'full'> {
    let written = 0;
    const answer = await this.tx
      .run(async (em) => {
        await this.lock(em, userId);
        let created = 0;
        written = 0;
        for (let i = 0; i < input.length; i += statementRows) {
          const chunk = input.slice(i, i + statementRows);
          const [r] = await rows<{ created: number; written: number }>(
            em,
            `WITH up AS (
             INSERT INTO contacts AS c (user_id, phone, name, fields, tags, source)
             SELECT $1, u.phone, u.name, u.fields, u.tags::text[], 'import'
               FROM unnest($2::text[], $3::text[], $4::jsonb[], $5::text[]) AS u(phone, name, fields, tags)
             ON CONFLICT (user_id, phone) DO UPDATE SET
               name = coalesce(excluded.name, c.name),
               fields = c.fields || excluded.fields,
               tags = (SELECT coalesce(array_agg(t ORDER BY o), '{}') FROM (
                         SELECT t, min(o) AS o FROM unnest(c.tags || excluded.tags) WITH ORDINALITY AS x(t, o) GROUP BY t
                       ) m),
               updated_at = now()
             -- A row that would change nothing leaves the contact as it is (no new row version to index).
             WHERE (excluded.name IS NOT NULL AND excluded.name IS DISTINCT FROM c.name)
                OR NOT (c.fields @> excluded.fields) OR NOT (c.tags @> excluded.tags)
             RETURNING (xmax = 0) AS inserted)
           SELECT (count(*) FILTER (WHERE inserted))::int AS created, count(*)::int AS written FROM up`,
            [
              userId,
              chunk.map((r) => r.phone),
              chunk.map((r) => r.name),
              chunk.map((r) => JSON.stringify(r.fields)),
              chunk.map((r) => arrayLiteral(r.tags)),
            ],
          );
          created += r!.created;
          written += r!.written;
        }
        const n = await this.countFolded(em, userId);
        // Thrown, so the transaction rolls back: an import is all or nothing.
        if (n > max) throw new ImportTooBig(n);
        return { created, updated: input.length - created };
      })
      .catch((err: unknown) => {
        if (err instanceof ImportTooBig) return 'full' as const;
        throw err;
      });
    // After the commit (autovacuum would take up to a minute): searches are planned for the book's new size.
    // The import is committed by now: a failed ANALYZE only leaves the statistics to autovacuum.
    if (answer !== 'full' && written >= analyzeRows)
      await this.tx.manager.query(`ANALYZE contacts`).catch(() => undefined);
    return answer;
  }
}

class ImportTooBig extends Error {
  constructor(readonly total: number) {
    super('import past the limit');
  }
}
