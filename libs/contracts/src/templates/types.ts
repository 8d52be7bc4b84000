import type { z } from '../common/schema.js';
import type {
  TemplateCategoryCountSchema,
  TemplateCreateSchema,
  TemplateSchema,
  TemplateStatsSchema,
} from './schemas.js';

/** A template as the API answers it (SPEC §3). Field names are the spec's, snake_case. */
export type Template = z.output<typeof TemplateSchema>;

/** The fields a user writes; what a create or a full update carries once validated. */
export type TemplateInput = z.output<typeof TemplateCreateSchema>;

/** The writable fields, each as a form field name (the keys of a 400's `errors`). */
export type TemplateField = keyof TemplateInput;

/** Field → message, as a 400 answers it and the form shows it. */
export type TemplateFieldErrors = Partial<Record<TemplateField, string>>;

export type TemplateStats = z.output<typeof TemplateStatsSchema>;

/** One entry of GET /api/templates/{userId}/categories. */
export type TemplateCategoryCount = z.output<typeof TemplateCategoryCountSchema>;

/** The list's optional filters once validated (no key = no filter). */
export interface TemplateListFilter {
  category?: TemplateCategoryCount['category'];
  is_favorite?: boolean;
}
