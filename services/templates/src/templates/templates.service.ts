import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import {
  isUuid,
  duplicateTemplateInput,
  LIMITS,
  TEMPLATE_CATEGORIES,
  TEMPLATE_MESSAGES,
  TemplatesErrorCode,
  validateTemplateCreate,
  validateTemplateListQuery,
  validateTemplateUpdate,
  type Template,
  type TemplateCategoryCount,
  type TemplateInput,
  type TemplateListRequest,
  type TemplateStats,
} from '@bns/contracts';
import { AppError } from '@bns/service-kit';
import { TemplateMedia } from './template-media.js';
import { TemplatesRepository } from './templates.repository.js';

function notFound(): AppError {
  return AppError.notFound(TemplatesErrorCode.NotFound, TEMPLATE_MESSAGES.templateNotFound);
}

/** The `mediaId` a body names (not yet checked), null to remove the attachment, undefined when absent. */
function mediaIdOf(body: unknown): unknown {
  return typeof body === 'object' && body !== null && !Array.isArray(body)
    ? (body as Record<string, unknown>).mediaId
    : undefined;
}

/** 409: the user keeps as many templates as allowed; the words say what to do. */
function limitReached(): AppError {
  return AppError.conflict(TemplatesErrorCode.LimitReached, TEMPLATE_MESSAGES.limitReached, {
    max: LIMITS.templatesPerUserMax,
  });
}

/**
 * Templates of one user: validation and errors here, queries in TemplatesRepository. Every query is
 * bounded by the caller's user id, so another user's template is "not found".
 */
@Injectable()
export class TemplatesService {
  constructor(
    private readonly templates: TemplatesRepository,
    private readonly media: TemplateMedia,
  ) {}

  async list(req: TemplateListRequest): Promise<Template[]> {
    const query = validateTemplateListQuery(req);
    if (!query.ok) throw AppError.validation(TemplatesErrorCode.InvalidFilter, query.message, query.errors);
    return this.templates.list(req.userId, query.value);
  }

  /**
   * With `idempotencyKey` (the client's `Idempotency-Key`), a create tried again after an answer it
   * never got (a 503 while the write went through) answers the template the first try stored.
   * An attachment (`mediaId`) is checked first: one the user does not have answers 404 before the form
   * is judged. It is held under the new template's id before the template is stored, so a template never
   * names an attachment the retention clean-up may delete; a hold left by a create that then fails is
   * released.
   */
  async create(userId: string, body: unknown, idempotencyKey?: string): Promise<Template> {
    const id = randomUUID();
    const mediaId = mediaIdOf(body);
    const held = mediaId !== undefined && mediaId !== null;
    if (held) await this.media.hold(userId, id, mediaId);
    try {
      const input = validateTemplateCreate(body);
      if (!input.ok) throw AppError.validation(TemplatesErrorCode.InvalidTemplate, input.message, input.errors);
      const template = await this.insert(userId, input.value, id, idempotencyKey);
      // A retry answered with the first try's template: that one holds its own attachment.
      if (held && template.id !== id) await this.media.release(userId, id);
      return template;
    } catch (err) {
      if (held) await this.media.release(userId, id).catch(() => undefined);
      throw err;
    }
  }

  /**
   * A new attachment (`mediaId`) is checked first and held at once (404 when the user does not have it);
   * should the form then be refused, the template holds what it had. `mediaId: null` removes it.
   */
  async update(userId: string, templateId: string, body: unknown): Promise<Template> {
    // An unknown id answers 404 before the body is judged, so a 400 never confirms an id exists.
    const current = await this.findOwned(userId, templateId);
    const mediaId = mediaIdOf(body);
    const holdsNew = mediaId !== undefined && mediaId !== null && mediaId !== current.mediaId;
    if (holdsNew) await this.media.hold(userId, templateId, mediaId);
    try {
      const input = validateTemplateUpdate(body);
      if (!input.ok) throw AppError.validation(TemplatesErrorCode.InvalidTemplate, input.message, input.errors);
      if (Object.keys(input.value).length === 0) return current;
      const updated = await this.templates.update(userId, templateId, input.value);
      // Deleted between the read and the write.
      if (!updated) throw notFound();
      if (mediaId === null && current.mediaId !== undefined) await this.media.release(userId, templateId);
      return updated;
    } catch (err) {
      if (holdsNew) await this.media.hold(userId, templateId, current.mediaId ?? null).catch(() => undefined);
      throw err;
    }
  }

  async remove(userId: string, templateId: string): Promise<{ id: string }> {
    // Postgres would reject a malformed uuid with an error; such an id simply names no template.
    const deleted = isUuid(templateId) ? await this.templates.delete(userId, templateId) : undefined;
    if (!deleted) throw notFound();
    // The template is gone either way; a hold left behind only keeps the file past its retention.
    if (deleted.mediaId !== null) await this.media.release(userId, templateId).catch(() => undefined);
    return { id: templateId };
  }

  async duplicate(userId: string, templateId: string): Promise<Template> {
    const source = await this.findOwned(userId, templateId);
    const copy = duplicateTemplateInput(source);
    const id = randomUUID();
    if (copy.mediaId !== null) await this.media.hold(userId, id, copy.mediaId);
    try {
      return await this.insert(userId, copy, id);
    } catch (err) {
      if (copy.mediaId !== null) await this.media.release(userId, id).catch(() => undefined);
      throw err;
    }
  }

  /** Every category of SPEC §9, in that order, with how many of the user's templates it holds. */
  async categories(userId: string): Promise<TemplateCategoryCount[]> {
    const counts = await this.templates.countByCategory(userId);
    return TEMPLATE_CATEGORIES.map((category) => ({ category, count: counts.get(category) ?? 0 }));
  }

  stats(userId: string): Promise<TemplateStats> {
    return this.templates.stats(userId);
  }

  async use(userId: string, templateId: string): Promise<Template> {
    const used = isUuid(templateId) ? await this.templates.use(userId, templateId) : undefined;
    if (!used) throw notFound();
    return used;
  }

  /**
   * Every new template (a create or a duplicate) is capped: the list answers all of a user's templates
   * in one NATS message, and LIMITS.templatesPerUserMax of them at every field limit still fit.
   */
  private async insert(userId: string, input: TemplateInput, id: string, idempotencyKey?: string): Promise<Template> {
    const created = await this.templates.insertUnlessFull(
      userId,
      { ...input, id },
      LIMITS.templatesPerUserMax,
      idempotencyKey,
    );
    if (created === 'full') throw limitReached();
    return created.template;
  }

  private async findOwned(userId: string, templateId: string): Promise<Template> {
    const found = isUuid(templateId) ? await this.templates.find(userId, templateId) : undefined;
    if (!found) throw notFound();
    return found;
  }
}
