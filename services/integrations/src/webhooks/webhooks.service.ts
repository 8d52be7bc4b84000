import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import {
  checkWith,
  INTEGRATIONS_LIMITS,
  INTEGRATIONS_MESSAGES,
  IntegrationsErrorCode,
  isUuid,
  WEBHOOK_TEST_EVENT,
  WebhookCreateSchema,
  WebhookUpdateSchema,
  type Webhook,
  type WebhookDelivery,
  type WebhookWithSecret,
} from '@bns/contracts';
import { AppError, SERVICE_ENV } from '@bns/service-kit';
import { CLOCK, type Clock } from '../clock/clock.js';
import type { IntegrationsEnv } from '../config/env.js';
import { Dispatcher } from './dispatcher.js';
import { AllowList, urlProblem } from './egress.js';
import { SealedSecrets } from './sealed-secrets.js';
import { newWebhookSecret, webhookIdOf } from './signing.js';
import { toWebhook, WebhooksRepository, type EndpointRow } from './webhooks.repository.js';

const notFound = () => AppError.notFound(IntegrationsErrorCode.WebhookNotFound, INTEGRATIONS_MESSAGES.webhookNotFound);

/** Webhook endpoints of one user: validation and errors here, queries in WebhooksRepository. */
@Injectable()
export class WebhooksService {
  private readonly allow: AllowList;

  constructor(
    private readonly webhooks: WebhooksRepository,
    private readonly dispatcher: Dispatcher,
    @Inject(SERVICE_ENV) env: IntegrationsEnv,
    @Inject(CLOCK) private readonly clock: Clock,
    private readonly secrets: SealedSecrets,
  ) {
    this.allow = new AllowList(env.WEBHOOK_ALLOWED_HOSTS);
  }

  async create(userId: string, body: unknown): Promise<WebhookWithSecret> {
    const input = checkWith(WebhookCreateSchema, body);
    if (!input.ok) throw AppError.validation(IntegrationsErrorCode.InvalidWebhook, input.message, input.errors);
    await this.checkUrl(input.value.url);
    const created = await this.webhooks.insertUnlessFull(
      userId,
      {
        url: input.value.url,
        events: input.value.events,
        description: input.value.description ?? '',
        secret: this.secrets.seal(newWebhookSecret()),
      },
      INTEGRATIONS_LIMITS.webhooksPerUserMax,
      this.clock.now(),
    );
    if (created === 'full')
      throw AppError.conflict(IntegrationsErrorCode.WebhookLimitReached, INTEGRATIONS_MESSAGES.webhookLimitReached, {
        max: INTEGRATIONS_LIMITS.webhooksPerUserMax,
      });
    return this.withSecret(created);
  }

  async list(userId: string): Promise<{ webhooks: Webhook[] }> {
    return { webhooks: (await this.webhooks.list(userId)).map(toWebhook) };
  }

  async update(userId: string, webhookId: string, body: unknown): Promise<Webhook> {
    await this.owned(userId, webhookId);
    const input = checkWith(WebhookUpdateSchema, body);
    if (!input.ok) throw AppError.validation(IntegrationsErrorCode.InvalidWebhook, input.message, input.errors);
    if (input.value.url !== undefined) await this.checkUrl(input.value.url);
    const updated = await this.webhooks.update(userId, webhookId, input.value);
    if (!updated) throw notFound();
    if (updated.enabled) this.dispatcher.kick();
    return toWebhook(updated);
  }

  async remove(userId: string, webhookId: string): Promise<{ id: string }> {
    if (!isUuid(webhookId) || !(await this.webhooks.delete(userId, webhookId))) throw notFound();
    return { id: webhookId };
  }

  async secret(userId: string, webhookId: string): Promise<WebhookWithSecret> {
    return this.withSecret(await this.owned(userId, webhookId));
  }

  async rotate(userId: string, webhookId: string): Promise<WebhookWithSecret> {
    await this.owned(userId, webhookId);
    const rotated = await this.webhooks.rotate(
      userId,
      webhookId,
      this.secrets.seal(newWebhookSecret()),
      new Date(this.clock.now().getTime() + INTEGRATIONS_LIMITS.webhookSecretOverlapMs),
    );
    if (!rotated) throw notFound();
    return this.withSecret(rotated);
  }

  async test(userId: string, webhookId: string): Promise<{ delivery: WebhookDelivery }> {
    const endpoint = await this.owned(userId, webhookId);
    const now = this.clock.now();
    const eventId = `test-${randomUUID()}`;
    const delivery = await this.webhooks.insertOne(
      endpoint,
      {
        userId,
        eventId,
        webhookId: webhookIdOf(eventId),
        type: WEBHOOK_TEST_EVENT,
        payload: {
          type: WEBHOOK_TEST_EVENT,
          timestamp: now.toISOString(),
          data: { message: 'A test event from the Business Notification System' },
        },
        eventAt: now,
      },
      now,
    );
    this.dispatcher.kick();
    return { delivery };
  }

  async deliveries(userId: string, webhookId: string): Promise<{ deliveries: WebhookDelivery[] }> {
    await this.owned(userId, webhookId);
    return { deliveries: await this.webhooks.deliveries(userId, webhookId, INTEGRATIONS_LIMITS.deliveriesShown) };
  }

  async resend(userId: string, webhookId: string, deliveryId: string): Promise<{ delivery: WebhookDelivery }> {
    await this.owned(userId, webhookId);
    const delivery = isUuid(deliveryId)
      ? await this.webhooks.resend(userId, webhookId, deliveryId, this.clock.now())
      : undefined;
    if (!delivery)
      throw AppError.notFound(IntegrationsErrorCode.DeliveryNotFound, INTEGRATIONS_MESSAGES.deliveryNotFound);
    this.dispatcher.kick();
    return { delivery };
  }

  /** The endpoint with its signing secret, opened (a create, a rotation and the tab's "show secret"). */
  private withSecret(e: EndpointRow): WebhookWithSecret {
    return { ...toWebhook(e), secret: this.secrets.open(e.secret) };
  }

  private async checkUrl(url: string): Promise<void> {
    const problem = await urlProblem(url, this.allow);
    if (problem) throw AppError.validation(IntegrationsErrorCode.WebhookUrlRefused, problem, { url: problem });
  }

  private async owned(userId: string, webhookId: string): Promise<EndpointRow> {
    const found = isUuid(webhookId) ? await this.webhooks.find(userId, webhookId) : undefined;
    if (!found) throw notFound();
    return found;
  }
}
