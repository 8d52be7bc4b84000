import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import type { TemplateStats } from '@bns/contracts';

@Injectable()
export class TemplatesService {
  constructor(private readonly db: DataSource) {}

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
}
