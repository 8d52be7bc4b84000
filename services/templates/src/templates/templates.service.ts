import { Injectable } from '@nestjs/common';
import { DataSource, type Repository } from 'typeorm';
import {
  duplicateTemplateInput,
  TEMPLATE_CATEGORIES,
  TEMPLATE_MESSAGES,
  TemplatesErrorCode,
  validateTemplateCreate,
  validateTemplateListQuery,
  validateTemplateUpdate,
  type Template,
  type TemplateCategory,
  type TemplateCategoryCount,
  type TemplateInput,
  type TemplateListRequest,
  type TemplateStats,
} from '@bns/contracts';
import { AppError } from '@bns/service-kit';
import { TemplateEntity } from './template.entity.js';

/** Postgres would reject a malformed uuid with an error; such an id simply names no template. */
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const COLUMN_OF: Record<keyof TemplateInput, keyof TemplateEntity> = {
  name: 'name',
  description: 'description',
  message_content: 'messageContent',
  phone_numbers: 'phoneNumbers',
  category: 'category',
  is_favorite: 'isFavorite',
};

interface TemplateRow {
  id: string;
  user_id: string;
  name: string;
  description: string;
  message_content: string;
  phone_numbers: string[];
  category: TemplateCategory;
  is_favorite: boolean;
  usage_count: number;
  created_at: Date;
  updated_at: Date;
}

function notFound(): AppError {
  return AppError.notFound(TemplatesErrorCode.NotFound, TEMPLATE_MESSAGES.templateNotFound);
}

function toTemplate(e: TemplateEntity): Template {
  return {
    id: e.id,
    name: e.name,
    description: e.description,
    message_content: e.messageContent,
    phone_numbers: e.phoneNumbers,
    category: e.category,
    is_favorite: e.isFavorite,
    usage_count: e.usageCount,
    created_at: e.createdAt.toISOString(),
    updated_at: e.updatedAt.toISOString(),
  };
}

function rowToTemplate(r: TemplateRow): Template {
  return {
    id: r.id,
    name: r.name,
    description: r.description,
    message_content: r.message_content,
    phone_numbers: r.phone_numbers,
    category: r.category,
    is_favorite: r.is_favorite,
    usage_count: r.usage_count,
    created_at: r.created_at.toISOString(),
    updated_at: r.updated_at.toISOString(),
  };
}

function toColumns(input: Partial<TemplateInput>): Partial<TemplateEntity> {
  const columns: Partial<Record<keyof TemplateEntity, unknown>> = {};
  for (const [field, value] of Object.entries(input) as [keyof TemplateInput, unknown][]) {
    columns[COLUMN_OF[field]] = value;
  }
  return columns as Partial<TemplateEntity>;
}

/**
 * Templates of one user. Every query filters by the caller's user id, so another user's template is
 * indistinguishable from one that does not exist.
 */
@Injectable()
export class TemplatesService {
  private readonly repo: Repository<TemplateEntity>;

  constructor(private readonly db: DataSource) {
    this.repo = db.getRepository(TemplateEntity);
  }

  async list(req: TemplateListRequest): Promise<Template[]> {
    const query = validateTemplateListQuery(req);
    if (!query.ok) throw AppError.validation(TemplatesErrorCode.InvalidFilter, query.message, query.errors);
    const rows = await this.repo.find({
      where: {
        userId: req.userId,
        ...(query.value.category === undefined ? {} : { category: query.value.category }),
        ...(query.value.is_favorite === undefined ? {} : { isFavorite: query.value.is_favorite }),
      },
      // id breaks ties so the order is stable between two calls.
      order: { createdAt: 'DESC', id: 'DESC' },
    });
    return rows.map(toTemplate);
  }

  async create(userId: string, body: unknown): Promise<Template> {
    const input = validateTemplateCreate(body);
    if (!input.ok) throw AppError.validation(TemplatesErrorCode.InvalidTemplate, input.message, input.errors);
    return this.insert(userId, input.value);
  }

  async update(userId: string, templateId: string, body: unknown): Promise<Template> {
    // An unknown id answers 404 before the body is judged, so a 400 never confirms an id exists.
    const current = await this.findOwned(userId, templateId);
    const input = validateTemplateUpdate(body);
    if (!input.ok) throw AppError.validation(TemplatesErrorCode.InvalidTemplate, input.message, input.errors);
    if (Object.keys(input.value).length === 0) return toTemplate(current);

    const result = await this.repo
      .createQueryBuilder()
      .update(TemplateEntity)
      .set({ ...toColumns(input.value), updatedAt: () => 'now()' })
      .where('id = :id AND user_id = :userId', { id: templateId, userId })
      .returning('*')
      .execute();
    const [row] = result.raw as TemplateRow[];
    // Deleted between the read and the write.
    if (!row) throw notFound();
    return rowToTemplate(row);
  }

  async remove(userId: string, templateId: string): Promise<{ id: string }> {
    if (!UUID.test(templateId)) throw notFound();
    const result = await this.repo.delete({ id: templateId, userId });
    if (!result.affected) throw notFound();
    return { id: templateId };
  }

  async duplicate(userId: string, templateId: string): Promise<Template> {
    const source = await this.findOwned(userId, templateId);
    return this.insert(userId, duplicateTemplateInput(toTemplate(source)));
  }

  async categories(userId: string): Promise<TemplateCategoryCount[]> {
    const rows: { category: TemplateCategory; count: number }[] = await this.db.query(
      `SELECT category, count(*)::int AS count FROM templates WHERE user_id = $1 GROUP BY category`,
      [userId],
    );
    const counts = new Map(rows.map((r) => [r.category, r.count]));
    return TEMPLATE_CATEGORIES.map((category) => ({ category, count: counts.get(category) ?? 0 }));
  }

  async stats(userId: string): Promise<TemplateStats> {
    const [row] = await this.db.query(
      `SELECT count(*)::int AS total_templates,
              count(*) FILTER (WHERE is_favorite)::int AS favorite_templates,
              count(DISTINCT category)::int AS categories,
              coalesce(sum(usage_count), 0)::int AS total_usage
         FROM templates WHERE user_id = $1`,
      [userId],
    );
    return row as TemplateStats;
  }

  /** One statement: concurrent uses each add exactly one, with no read-modify-write race. */
  async use(userId: string, templateId: string): Promise<Template> {
    if (!UUID.test(templateId)) throw notFound();
    const [rows]: [TemplateRow[], number] = await this.db.query(
      `UPDATE templates SET usage_count = usage_count + 1
        WHERE id = $1 AND user_id = $2
        RETURNING *`,
      [templateId, userId],
    );
    const [row] = rows;
    if (!row) throw notFound();
    return rowToTemplate(row);
  }

  private async findOwned(userId: string, templateId: string): Promise<TemplateEntity> {
    if (!UUID.test(templateId)) throw notFound();
    const found = await this.repo.findOneBy({ id: templateId, userId });
    if (!found) throw notFound();
    return found;
  }

  private async insert(userId: string, input: TemplateInput): Promise<Template> {
    // save() reads back the generated id, timestamps and defaults with INSERT ... RETURNING.
    const saved = await this.repo.save(this.repo.create({ userId, ...toColumns(input) }));
    return toTemplate(saved);
  }
}
