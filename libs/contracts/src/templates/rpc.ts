import type { TemplateStats } from './types.js';

export interface TemplatesRequests {
  'templates.stats': { request: { userId: string }; reply: TemplateStats };
}
