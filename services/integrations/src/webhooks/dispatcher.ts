import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { INTEGRATIONS_LIMITS } from '@bns/contracts';
import { SERVICE_ENV } from '@bns/service-kit';
import { CLOCK, type Clock } from '../clock/clock.js';
import type { IntegrationsEnv } from '../config/env.js';
import { observeDelivery } from '../metrics/integrations.metrics.js';
import { AllowList, postWebhook, type PostOutcome } from './egress.js';
import { SealedSecrets } from './sealed-secrets.js';
import { signatureHeader } from './signing.js';
import { WebhooksRepository, type DueDelivery } from './webhooks.repository.js';

/** The wait before retry n (1-based) of a delivery: the schedule's step, ± jitter, divided by `scale`. */
export function retryDelayMs(attempt: number, scale: number, random: () => number = Math.random): number | undefined {
  const step = INTEGRATIONS_LIMITS.webhookRetryScheduleMs[attempt - 1];
  if (step === undefined) return undefined;
  const jitter = 1 + (random() * 2 - 1) * INTEGRATIONS_LIMITS.webhookRetryJitter;
  return Math.max(1, Math.round((step * jitter) / scale));
}

/**
 * Sends due deliveries: the queue is the webhook_deliveries table, claimed with SKIP LOCKED as leases,
 * so any replica can send any delivery and one that died mid-POST leaves its rows to be sent again
 * (with the same webhook-id) once their lease ran out. At most WEBHOOK_CONCURRENCY POSTs in flight,
 * one per endpoint: a dead endpoint costs one slot for its 10 s timeout, never another user's turn.
 */
@Injectable()
export class Dispatcher implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('WebhookDispatcher');
  private readonly allow: AllowList;
  private readonly busy = new Set<string>();
  private readonly inFlight = new Set<Promise<void>>();
  private timer?: NodeJS.Timeout;
  private ticking?: Promise<void>;
  private again = false;
  private stopped = true;

  constructor(
    private readonly webhooks: WebhooksRepository,
    @Inject(SERVICE_ENV) private readonly env: IntegrationsEnv,
    @Inject(CLOCK) private readonly clock: Clock,
    private readonly secrets: SealedSecrets,
  ) {
    this.allow = new AllowList(env.WEBHOOK_ALLOWED_HOSTS);
  }

  onApplicationBootstrap(): void {
    this.stopped = false;
    this.kick();
  }

  async onApplicationShutdown(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.ticking;
    await Promise.allSettled([...this.inFlight]);
  }

  /** Look for due deliveries now (new ones were queued, or a slot came free). */
  kick(): void {
    if (this.stopped) return;
    if (this.ticking) {
      this.again = true;
      return;
    }
    clearTimeout(this.timer);
    this.ticking = this.tick()
      .then(() => undefined)
      .catch((err: unknown) => this.logger.warn({ err }, 'looking for due deliveries failed'))
      .finally(() => {
        this.ticking = undefined;
        if (this.again) {
          this.again = false;
          this.kick();
        } else {
          this.schedule();
        }
      });
  }

  /** Claims what is due and free and starts sending it; answers once the claims are made (not sent). */
  async tick(): Promise<number> {
    const room = this.env.WEBHOOK_CONCURRENCY - this.inFlight.size;
    if (room <= 0) return 0;
    const now = this.clock.now();
    const claimed = await this.webhooks.claimDue(
      room,
      [...this.busy],
      now,
      new Date(now.getTime() + this.env.WEBHOOK_LEASE_MS),
    );
    for (const d of claimed) {
      this.busy.add(d.endpoint_id);
      const sending: Promise<void> = this.send(d)
        .catch((err: unknown) =>
          this.logger.error(
            { err, deliveryId: d.id },
            'recording a delivery outcome failed; it is sent again after its lease',
          ),
        )
        .finally(() => {
          this.busy.delete(d.endpoint_id);
          this.inFlight.delete(sending);
          this.kick();
        });
      this.inFlight.add(sending);
    }
    return claimed.length;
  }

  /** Resolves when nothing is in flight (tests). */
  async idle(): Promise<void> {
    while (this.inFlight.size > 0 || this.ticking) await Promise.allSettled([...this.inFlight, this.ticking]);
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => this.kick(), this.env.WEBHOOK_POLL_MS);
    this.timer.unref();
  }

  private async send(d: DueDelivery): Promise<void> {
    const now = this.clock.now();
    const body = JSON.stringify(d.payload);
    const timestamp = Math.floor(now.getTime() / 1000);
    // Opened only for the signature: the plain secret is never kept or logged.
    const secrets =
      d.previous_secret && d.previous_secret_expires_at && d.previous_secret_expires_at > now
        ? [this.secrets.open(d.secret), this.secrets.open(d.previous_secret)]
        : [this.secrets.open(d.secret)];
    const outcome: PostOutcome = await postWebhook(
      d.url,
      body,
      {
        'webhook-id': d.webhook_id,
        'webhook-timestamp': String(timestamp),
        'webhook-signature': signatureHeader(secrets, d.webhook_id, timestamp, body),
      },
      this.allow,
      INTEGRATIONS_LIMITS.webhookTimeoutMs,
      INTEGRATIONS_LIMITS.webhookResponseMaxBytes,
    );
    const after = this.clock.now();
    const ok = outcome.status !== undefined && outcome.status >= 200 && outcome.status < 300;
    observeDelivery(ok, outcome.latencyMs, after.getTime() - d.event_at.getTime());
    if (ok) {
      await this.webhooks.succeeded(d, outcome.status!, outcome.latencyMs, after);
      return;
    }
    const wait = retryDelayMs(d.attempts, this.env.WEBHOOK_RETRY_SCALE);
    const disabled = await this.webhooks.failed(
      d,
      { httpStatus: outcome.status, error: outcome.error ?? 'Failed', latencyMs: outcome.latencyMs },
      wait === undefined ? undefined : new Date(after.getTime() + wait),
      after,
      new Date(after.getTime() - INTEGRATIONS_LIMITS.webhookDisableAfterMs),
    );
    // The endpoint's id only: its URL may name a customer.
    if (disabled) this.logger.warn({ endpointId: d.endpoint_id }, 'webhook endpoint disabled after failing for days');
  }
}
