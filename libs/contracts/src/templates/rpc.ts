import type { z } from '../common/schema.js';
import type {
  TemplateCreateRequestSchema,
  TemplateListRequestSchema,
  TemplateRefSchema,
  TemplateUpdateRequestSchema,
  TemplateUserRequestSchema,
} from './schemas.js';
import type { Template, TemplateCategoryCount, TemplateStats } from './types.js';

/**
 * Request/reply payloads of the templates service. Every request carries the acting `userId` (the
 * token's subject); a template of another user is "not found". Bodies and query values travel as the
 * client sent them (`unknown`): the service validates them with the rules in validation.ts.
 * Failures: `TemplatesErrorCode` (validation → 400 with `errors`, not found → 404, a create or
 * duplicate past LIMITS.templatesPerUserMax → 409).
 */
export type TemplateListRequest = z.output<typeof TemplateListRequestSchema>;
export type TemplateRef = z.output<typeof TemplateRefSchema>;
export type TemplateUserRequest = z.output<typeof TemplateUserRequestSchema>;
export type TemplateCreateRequest = z.output<typeof TemplateCreateRequestSchema>;
export type TemplateUpdateRequest = z.output<typeof TemplateUpdateRequestSchema>;

export interface TemplatesRequests {
  /** Newest first, optionally one category and/or favorites only. */
  'templates.list': { request: TemplateListRequest; reply: Template[] };
  /** Refused (409, TEMPLATE_LIMIT_REACHED) when the user already keeps LIMITS.templatesPerUserMax. */
  'templates.create': { request: TemplateCreateRequest; reply: Template };
  /** Full or partial: only the fields present in `body` change. */
  'templates.update': { request: TemplateUpdateRequest; reply: Template };
  'templates.delete': { request: TemplateRef; reply: { id: string } };
  /** "<name> (Copy)", same content, not a favorite, usage 0; capped as a create is. */
  'templates.duplicate': { request: TemplateRef; reply: Template };
  /** Every category of SPEC §9, in that order, with how many of the user's templates it holds. */
  'templates.categories': { request: TemplateUserRequest; reply: TemplateCategoryCount[] };
  'templates.stats': { request: TemplateUserRequest; reply: TemplateStats };
  /** usage_count + 1 in one atomic statement; answers the template after the increment. */
  'templates.use': { request: TemplateRef; reply: Template };
}
