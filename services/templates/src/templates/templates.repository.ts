import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import type { Template, TemplateCategory, TemplateInput, TemplateListFilter, TemplateStats } from '@bns/contracts';
import { rows, Transactions } from '@bns/service-kit';
import { TemplateEntity } from './template.entity.js';

/** The API's view of a stored template: everything but the owner, times as ISO text. */
function toTemplate({ user_id: _owner, created_at, updated_at, mediaId, ...fields }: TemplateEntity): Template {
  return {
    ...fields,
    created_at: created_at.toISOString(),
    updated_at: updated_at.toISOString(),
    ...(mediaId === null ? {} : { mediaId }),
  };
}

/**
 * Every query of the templates table. Each one is bounded by the owner's id, so another user's
 * template is indistinguishable from one that does not exist (undefined / false).
 */
@Injectable()
export class TemplatesRepository {
  constructor(private readonly tx: Transactions) {}

  private repo(em: EntityManager = this.tx.manager) {
    return em.getRepository(TemplateEntity);
  }

  /** Newest first; id breaks ties so the order is stable between two calls. */
  async list(userId: string, filter: TemplateListFilter): Promise<Template[]> {
    const found = await this.repo().find({
      where: {
        user_id: userId,
        ...(filter.category === undefined ? {} : { category: filter.category }),
        ...(filter.is_favorite === undefined ? {} : { is_favorite: filter.is_favorite }),
      },
      order: { created_at: 'DESC', id: 'DESC' },
    });
    return found.map(toTemplate);
  }

  async find(userId: string, id: string): Promise<Template | undefined> {
    const found = await this.repo().findOneBy({ id, user_id: userId });
    return found ? toTemplate(found) : undefined;
  }

  /**
   * Stores a new template unless the user already keeps `max` ('full' then). The user's creates take
   * a transaction-scoped advisory lock first, so two at once cannot both count max − 1 and both
   * insert (a count and an insert alone would race under read committed). Other users never wait on
   * it (but for a rare hash collision). save() reads back the generated id, timestamps and defaults
   * with INSERT … RETURNING. With `idempotencyKey`, a create of the user that already stored a
   * template under that key answers it (`replayed`) instead: under the same lock, so a retry racing
   * its first try still stores one.
   */
  insertUnlessFull(
    userId: string,
    input: TemplateInput & { id: string },
    max: number,
    idempotencyKey?: string,
  ): Promise<{ template: Template; replayed: boolean } | 'full'> {
    return this.tx.run(async (em) => {
      await em.query(`SELECT pg_advisory_xact_lock(hashtext('bns:templates:' || $1))`, [userId]);
      const repo = this.repo(em);
      if (idempotencyKey !== undefined) {
        const [earlier] = await rows<{ template_id: string }>(
          em,
          `SELECT template_id FROM template_creates WHERE user_id = $1 AND idempotency_key = $2`,
          [userId, idempotencyKey],
        );
        const template = earlier ? await this.reread(em, userId, earlier.template_id) : undefined;
        if (template) return { template, replayed: true };
      }
      if ((await repo.countBy({ user_id: userId })) >= max) return 'full';
      const template = toTemplate(await repo.save(repo.create({ ...input, user_id: userId })));
      if (idempotencyKey !== undefined) {
        await rows(em, `INSERT INTO template_creates (user_id, idempotency_key, template_id) VALUES ($1, $2, $3)`, [
          userId,
          idempotencyKey,
          template.id,
        ]);
      }
      return { template, replayed: false };
    });
  }

  /** Changes only the given fields; undefined when the user has no such template. */
  update(userId: string, id: string, changes: Partial<TemplateInput>): Promise<Template | undefined> {
    return this.tx.run(async (em) => {
      const result = await this.repo(em).update({ id, user_id: userId }, { ...changes, updated_at: () => 'now()' });
      return result.affected ? this.reread(em, userId, id) : undefined;
    });
  }

  /**
   * One increment statement (no read-modify-write: concurrent uses each add exactly one), read back in
   * the same transaction. A use is not an edit: updated_at is set to itself, since the query builder
   * would otherwise stamp it.
   */
  use(userId: string, id: string): Promise<Template | undefined> {
    return this.tx.run(async (em) => {
      const result = await this.repo(em)
        .createQueryBuilder()
        .update()
        .set({ usage_count: () => 'usage_count + 1', updated_at: () => 'updated_at' })
        .where({ id, user_id: userId })
        .execute();
      return result.affected ? this.reread(em, userId, id) : undefined;
    });
  }

  /** Deletes the template; answers the attachment it held (null for none), or undefined when there was no such template. */
  async delete(userId: string, id: string): Promise<{ mediaId: string | null } | undefined> {
    const [deleted] = await rows<{ mediaId: string | null }>(
      this.tx.manager,
      `DELETE FROM templates WHERE id = $1 AND user_id = $2 RETURNING media_id AS "mediaId"`,
      [id, userId],
    );
    return deleted;
  }

  /** How many templates the user has in each category that holds any. */
  async countByCategory(userId: string): Promise<Map<TemplateCategory, number>> {
    const counts = await this.repo()
      .createQueryBuilder('t')
      .select('t.category', 'category')
      .addSelect('count(*)::int', 'count')
      .where('t.user_id = :userId', { userId })
      .groupBy('t.category')
      .getRawMany<{ category: TemplateCategory; count: number }>();
    return new Map(counts.map((c) => [c.category, c.count]));
  }

  async stats(userId: string): Promise<TemplateStats> {
    const stats = await this.repo()
      .createQueryBuilder('t')
      .select('count(*)::int', 'total_templates')
      .addSelect('(count(*) FILTER (WHERE t.is_favorite))::int', 'favorite_templates')
      .addSelect('count(DISTINCT t.category)::int', 'categories')
      .addSelect('coalesce(sum(t.usage_count), 0)::int', 'total_usage')
      .where('t.user_id = :userId', { userId })
      .getRawOne<TemplateStats>();
    return stats!;
  }

  private async reread(em: EntityManager, userId: string, id: string): Promise<Template> {
    return toTemplate(await this.repo(em).findOneByOrFail({ id, user_id: userId }));
  }
}
