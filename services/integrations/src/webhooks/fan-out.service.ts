import { Inject, Injectable, Logger } from '@nestjs/common';
import { RESULTS_LIMITS, type WebhookEventType, type WebhookPayload } from '@bns/contracts';
import { RpcClient } from '@bns/service-kit';
import type { EntityManager } from 'typeorm';
import { CLOCK, type Clock } from '../clock/clock.js';
import { campaignTransition, type SourceEvent } from './event-mapping.js';
import { webhookIdOf } from './signing.js';
import { WebhooksRepository } from './webhooks.repository.js';

/** A recipient the jobs service did not send to, as its report lists it. */
interface SkippedRecipient {
  phoneNumber: string;
  reason: string;
  at: string;
}

/** What one event needs from other services, asked before its transaction (no NATS call holds a lock). */
interface Lookups {
  pausedReason?: string;
  /** The campaign's skipped recipients not turned into webhooks yet, and the count they bring it to. */
  skipped?: { recipients: SkippedRecipient[]; seen: number };
}

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
    const lookups = await this.lookups(e);
    return this.webhooks.run(async (em) => {
      let type: WebhookEventType | undefined = e.webhook?.type;
      let data = e.webhook?.data;
      let queued = 0;
      if (e.campaign) {
        const before = await this.webhooks.swapCampaignStatus(em, e.userId, e.campaign.jobId, e.campaign.status, now);
        type = campaignTransition(before, e.campaign.status);
        data = {
          campaignId: e.campaign.jobId,
          status: e.campaign.status,
          progress: e.campaign.progress,
          ...(lookups.pausedReason ? { reason: lookups.pausedReason } : {}),
        };
        if (lookups.skipped) queued += await this.skipped(em, e, e.campaign.jobId, lookups.skipped, now);
      }
      if (!type || !data) return queued;
      const payload: WebhookPayload = { type, timestamp: e.at, data };
      return (
        queued +
        (await this.webhooks.fanOut(
          em,
          {
            userId: e.userId,
            eventId: e.eventId,
            webhookId: webhookIdOf(e.eventId),
            type,
            payload,
            eventAt: new Date(e.at),
            ...(type.startsWith('message.') && typeof data.campaignId === 'string'
              ? { messageId: data.campaignId }
              : {}),
          },
          now,
        ))
      );
    });
  }

  private async lookups(e: SourceEvent): Promise<Lookups> {
    if (!e.campaign) return {};
    const pausedReason =
      e.campaign.status === 'paused' ? await this.pausedReason(e.userId, e.campaign.jobId) : undefined;
    const skipped = await this.newlySkipped(e.userId, e.campaign.jobId, Number(e.campaign.progress.skipped ?? 0));
    return { ...(pausedReason ? { pausedReason } : {}), ...(skipped ? { skipped } : {}) };
  }

  /**
   * `message.skipped`: a campaign's progress counts its skipped recipients (opted out, not on
   * WhatsApp); when the count passed what was turned into webhooks, the new ones are read from the
   * jobs service's report (over NATS, skipped rows only, in the order they were skipped). Only for a
   * user with an endpoint that wants them. A failure throws: the event is redelivered and tried again.
   */
  private async newlySkipped(userId: string, jobId: string, skipped: number): Promise<Lookups['skipped'] | undefined> {
    if (skipped <= 0 || !(await this.webhooks.subscribed(userId, 'message.skipped'))) return undefined;
    const seen = await this.webhooks.skippedSeen(userId, jobId);
    if (skipped <= seen) return undefined;
    const all: SkippedRecipient[] = [];
    let cursor: string | undefined;
    do {
      const page = await this.rpc.call('jobs.results', {
        userId,
        jobId,
        status: 'skipped',
        limit: String(RESULTS_LIMITS.reportPageMax),
        ...(cursor ? { cursor } : {}),
      });
      for (const r of page.results)
        all.push({
          phoneNumber: r.phoneNumber,
          reason: r.error ?? 'skipped',
          at: r.failedAt ?? new Date().toISOString(),
        });
      cursor = page.nextCursor ?? undefined;
    } while (cursor);
    return { recipients: all.slice(seen), seen: Math.max(seen, all.length) };
  }

  /** One `message.skipped` per new skipped recipient; the event id names the campaign and number, so a replay adds nothing. */
  private async skipped(
    em: EntityManager,
    e: SourceEvent,
    jobId: string,
    skipped: NonNullable<Lookups['skipped']>,
    now: Date,
  ): Promise<number> {
    let queued = 0;
    for (const r of skipped.recipients) {
      const eventId = `message-skipped:${jobId}:${r.phoneNumber}`;
      queued += await this.webhooks.fanOut(
        em,
        {
          userId: e.userId,
          eventId,
          webhookId: webhookIdOf(eventId),
          type: 'message.skipped',
          payload: {
            type: 'message.skipped',
            timestamp: r.at,
            data: { campaignId: jobId, to: r.phoneNumber, status: 'skipped', reason: r.reason, at: r.at },
          },
          eventAt: new Date(r.at),
          messageId: jobId,
        },
        now,
      );
    }
    await this.webhooks.raiseSkippedSeen(em, e.userId, jobId, skipped.seen, now);
    return queued;
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
