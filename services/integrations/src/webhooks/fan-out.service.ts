import { Inject, Injectable, Logger } from '@nestjs/common';
import { RpcClient } from '@bns/service-kit';
import type { WebhookEventType, WebhookPayload } from '@bns/contracts';
import { CLOCK, type Clock } from '../clock/clock.js';
import { campaignTransition, type SourceEvent } from './event-mapping.js';
import { webhookIdOf } from './signing.js';
import { WebhooksRepository } from './webhooks.repository.js';

/**
 * Turns one event into deliveries, in one transaction with the campaign's last seen status: the
 * event is acked only after this committed, and handling it again inserts nothing new.
 */
@Injectable()
export class FanOutService {
  private readonly logger = new Logger('WebhookFanOut');

  constructor(
    private readonly webhooks: WebhooksRepository,
    private readonly rpc: RpcClient,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  /** Answers how many deliveries were queued. */
  async apply(e: SourceEvent): Promise<number> {
    const now = this.clock.now();
    const pausedReason =
      e.campaign?.status === 'paused' ? await this.pausedReason(e.userId, e.campaign.jobId) : undefined;
    return this.webhooks.run(async (em) => {
      let type: WebhookEventType | undefined = e.webhook?.type;
      let data = e.webhook?.data;
      if (e.campaign) {
        const before = await this.webhooks.swapCampaignStatus(em, e.userId, e.campaign.jobId, e.campaign.status, now);
        type = campaignTransition(before, e.campaign.status);
        data = {
          campaignId: e.campaign.jobId,
          status: e.campaign.status,
          progress: e.campaign.progress,
          ...(pausedReason ? { reason: pausedReason } : {}),
        };
      }
      if (!type || !data) return 0;
      const payload: WebhookPayload = { type, timestamp: e.at, data };
      return this.webhooks.fanOut(
        em,
        {
          userId: e.userId,
          eventId: e.eventId,
          webhookId: webhookIdOf(e.eventId),
          type,
          payload,
          eventAt: new Date(e.at),
        },
        now,
      );
    });
  }

  /** Why a campaign paused (`user`, `window`, `daily_cap`, …), asked of the jobs service; undefined when it cannot say. */
  private async pausedReason(userId: string, jobId: string): Promise<string | undefined> {
    try {
      const answer = await this.rpc.call('jobs.status', { userId, jobId });
      if (!('jobJson' in answer)) return undefined;
      return (JSON.parse(answer.jobJson) as { pausedReason?: string | null }).pausedReason ?? undefined;
    } catch (err) {
      this.logger.debug({ err }, 'could not read why a campaign paused');
      return undefined;
    }
  }
}
