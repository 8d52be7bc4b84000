import { Injectable } from '@nestjs/common';
import { RpcClient } from '@bns/service-kit';

/** The name a template holds its attachment under in the jobs service (which owns attachments). */
export const templateHolder = (templateId: string) => `template:${templateId}`;

/**
 * A template's attachment, kept by the jobs service: a held attachment outlives the retention period.
 * The jobs service answers "not found" (404) for an attachment the user does not have.
 */
@Injectable()
export class TemplateMedia {
  constructor(private readonly rpc: RpcClient) {}

  /** The template now holds `mediaId` (checked to be the user's, 404 otherwise), or nothing (null). */
  async hold(userId: string, templateId: string, mediaId: unknown): Promise<void> {
    await this.rpc.call('jobs.media.hold', {
      userId,
      holder: templateHolder(templateId),
      ...(mediaId === null || mediaId === undefined ? {} : { mediaId }),
    });
  }

  release(userId: string, templateId: string): Promise<void> {
    return this.hold(userId, templateId, null);
  }
}
