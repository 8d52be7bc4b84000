import { Injectable } from '@nestjs/common';
import type { Segment, SegmentInput, SegmentRecipient, SegmentRule } from '@bns/contracts';
import { rows, Transactions } from '@bns/service-kit';
import { segmentWhere } from './segment-sql.js';

interface SegmentRow {
  id: string;
  name: string;
  rule: SegmentRule;
  created_at: Date;
}
const toSegment = (r: SegmentRow): Segment => ({
  id: r.id,
  name: r.name,
  rule: r.rule,
  createdAt: r.created_at.toISOString(),
});

const FROM = `FROM contacts c LEFT JOIN phone_facts f ON f.user_id = c.user_id AND f.phone = c.phone`;

/** Every query of saved segments and of the contacts a rule selects, bounded by the owner's id. */
@Injectable()
export class SegmentsRepository {
  constructor(private readonly tx: Transactions) {}

  /** A new segment, or 'full' when the user already keeps `max`. */
  insertUnlessFull(userId: string, input: SegmentInput, max: number): Promise<{ id: string } | 'full'> {
    return this.tx.run(async (em) => {
      await em.query(`SELECT pg_advisory_xact_lock(hashtext('bns:segments:' || $1))`, [userId]);
      const [{ n }] = (await em.query(`SELECT count(*)::int AS n FROM segments WHERE user_id = $1`, [userId])) as {
        n: number;
      }[];
      if (n >= max) return 'full';
      const [created] = await rows<{ id: string }>(
        em,
        `INSERT INTO segments (user_id, name, rule) VALUES ($1, $2, $3) RETURNING id`,
        [userId, input.name, input.rule],
      );
      return created!;
    });
  }

  async list(userId: string): Promise<Segment[]> {
    const found = await rows<SegmentRow>(
      this.tx.manager,
      `SELECT id, name, rule, created_at FROM segments WHERE user_id = $1 ORDER BY created_at DESC, id`,
      [userId],
    );
    return found.map(toSegment);
  }

  async find(userId: string, id: string): Promise<Segment | undefined> {
    const [found] = await rows<SegmentRow>(
      this.tx.manager,
      `SELECT id, name, rule, created_at FROM segments WHERE user_id = $1 AND id = $2`,
      [userId, id],
    );
    return found ? toSegment(found) : undefined;
  }

  async delete(userId: string, id: string): Promise<boolean> {
    return (
      (await rows(this.tx.manager, `DELETE FROM segments WHERE user_id = $1 AND id = $2 RETURNING id`, [userId, id]))
        .length > 0
    );
  }

  /** How many of the user's contacts the rule selects. */
  async count(userId: string, rule: SegmentRule): Promise<number> {
    const params: unknown[] = [userId];
    const where = ['c.user_id = $1', ...segmentWhere(rule, params)];
    const [r] = await rows<{ n: number }>(
      this.tx.manager,
      `SELECT count(*)::int AS n ${FROM} WHERE ${where.join(' AND ')}`,
      params,
    );
    return r!.n;
  }

  /** The phones the rule selects, in order (for tests and exports). */
  async phones(userId: string, rule: SegmentRule): Promise<string[]> {
    const params: unknown[] = [userId];
    const where = ['c.user_id = $1', ...segmentWhere(rule, params)];
    const found = await rows<{ phone: string }>(
      this.tx.manager,
      `SELECT c.phone ${FROM} WHERE ${where.join(' AND ')} ORDER BY c.phone`,
      params,
    );
    return found.map((r) => r.phone);
  }

  /**
   * One page of the rule's contacts by phone, created no later than `asOf`: the recipients of a job
   * are the contacts that matched when it started. Each carries its name and fields as variables.
   */
  async members(
    userId: string,
    rule: SegmentRule,
    asOf: string,
    after: string | undefined,
    limit: number,
  ): Promise<SegmentRecipient[]> {
    const params: unknown[] = [userId, asOf];
    const where = ['c.user_id = $1', 'c.created_at <= $2::timestamptz', ...segmentWhere(rule, params)];
    if (after !== undefined) {
      params.push(after);
      where.push(`c.phone > $${params.length}`);
    }
    params.push(limit);
    const found = await rows<{ phone: string; name: string | null; fields: Record<string, string> }>(
      this.tx.manager,
      `SELECT c.phone, c.name, c.fields ${FROM} WHERE ${where.join(' AND ')} ORDER BY c.phone LIMIT $${params.length}`,
      params,
    );
    return found.map((r) => ({ phone: r.phone, variables: { ...(r.name ? { name: r.name } : {}), ...r.fields } }));
  }
}
