import type { TemplateCategory } from '../common/limits.js';

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

export interface TemplateStats {
  total_templates: number;
  favorite_templates: number;
  categories: number;
  total_usage: number;
}
