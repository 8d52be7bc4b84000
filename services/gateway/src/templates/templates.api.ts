import { Injectable } from '@nestjs/common';
import {
  TemplatesErrorCode,
  type Infer,
  type TemplateCreateSchema,
  type TemplateListQuerySchema,
} from '@bns/contracts';
import { RpcClient } from '@bns/service-kit';
import { idempotencyKeyOf } from '../http/idempotency-key.js';

/** The user's message templates, owned by the templates service (which checks every body again). */
@Injectable()
export class TemplatesApi {
  constructor(private readonly rpc: RpcClient) {}

  async categories(userId: string) {
    return { success: true, categories: await this.rpc.call('templates.categories', { userId }) };
  }

  async stats(userId: string) {
    return { success: true, stats: await this.rpc.call('templates.stats', { userId }) };
  }

  async list(userId: string, query: Infer<typeof TemplateListQuerySchema>) {
    const templates = await this.rpc.call('templates.list', {
      userId,
      category: query.category,
      is_favorite: query.is_favorite,
    });
    return { success: true, templates };
  }

  async create(
    userId: string,
    body: Infer<typeof TemplateCreateSchema>,
    idempotencyKeyHeader: string | string[] | undefined,
  ) {
    const idempotencyKey = idempotencyKeyOf(idempotencyKeyHeader, TemplatesErrorCode.IdempotencyKeyInvalid);
    return {
      success: true,
      template: await this.rpc.call('templates.create', {
        userId,
        body,
        ...(idempotencyKey ? { idempotencyKey } : {}),
      }),
    };
  }

  async update(userId: string, templateId: string, body: unknown) {
    return { success: true, template: await this.rpc.call('templates.update', { userId, templateId, body }) };
  }

  async remove(userId: string, templateId: string) {
    await this.rpc.call('templates.delete', { userId, templateId });
    return { success: true };
  }

  async use(userId: string, templateId: string) {
    return { success: true, template: await this.rpc.call('templates.use', { userId, templateId }) };
  }

  async duplicate(userId: string, templateId: string) {
    return { success: true, template: await this.rpc.call('templates.duplicate', { userId, templateId }) };
  }
}
