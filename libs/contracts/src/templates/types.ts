import type { TemplateCategory } from '../common/limits.js';

/** A template as the API answers it (SPEC §3). Field names are the spec's, snake_case. */
export interface Template {
  id: string;
  name: string;
  description: string;
  message_content: string;
  phone_numbers: string[];
  category: TemplateCategory;
  is_favorite: boolean;
  usage_count: number;
  created_at: string;
  updated_at: string;
}

/** The fields a user writes; what a create or a full update carries once validated. */
export interface TemplateInput {
  name: string;
  description: string;
  message_content: string;
  phone_numbers: string[];
  category: TemplateCategory;
  is_favorite: boolean;
}

/** The writable fields, each as a form field name (the keys of a 400's `errors`). */
export type TemplateField = keyof TemplateInput;

/** Field → message, as a 400 answers it and the form shows it. */
export type TemplateFieldErrors = Partial<Record<TemplateField, string>>;

export interface TemplateStats {
  total_templates: number;
  favorite_templates: number;
  categories: number;
  total_usage: number;
}

/** One entry of GET /api/templates/{userId}/categories. */
export interface TemplateCategoryCount {
  category: TemplateCategory;
  count: number;
}

/** The list's optional filters once validated (no key = no filter). */
export interface TemplateListFilter {
  category?: TemplateCategory;
  is_favorite?: boolean;
}
