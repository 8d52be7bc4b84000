import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import type { NatsConnection, Subscription } from '@nats-io/transport-node';
import {
  API_KEY_REVOKED_SUBJECT,
  API_KEY_USED_SUBJECT,
  ApiKeyCreateSchema,
  ApiKeyUsedNoticeSchema,
  checkWith,
  INTEGRATIONS_LIMITS,
  INTEGRATIONS_MESSAGES,
  IntegrationsErrorCode,
  isUuid,
  type ApiKey,
  type ApiKeyCreated,
  type ApiKeyPrincipal,
  type ApiKeyRevokedNotice,
} from '@bns/contracts';
import { AppError, NATS_CONNECTION } from '@bns/service-kit';
import { CLOCK, type Clock } from '../clock/clock.js';
import { ApiKeysRepository } from './api-keys.repository.js';
import { newKeySecret } from './key-secret.js';

const notFound = () => AppError.notFound(IntegrationsErrorCode.KeyNotFound, INTEGRATIONS_MESSAGES.keyNotFound);

/**
 * API keys of one user: created with scopes (the secret is answered once and only its hash kept),
 * listed, revoked. A revocation is told to every gateway replica on core NATS after it committed, so
 * their caches drop the key at once. Gateways report when a key was used (at most once a minute per
 * key and replica); the replicas of this service share that subscription as a queue group.
 */
@Injectable()
export class ApiKeysService implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('ApiKeys');
  private used?: Subscription;

  constructor(
    private readonly keys: ApiKeysRepository,
    @Inject(NATS_CONNECTION) private readonly nc: NatsConnection,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  onApplicationBootstrap(): void {
    this.used = this.nc.subscribe(API_KEY_USED_SUBJECT, {
      queue: 'integrations',
      callback: (err, msg) => {
        if (err) return;
        let body: unknown;
        try {
          body = msg.json();
        } catch {
          return;
        }
        const notice = ApiKeyUsedNoticeSchema.safeParse(body);
        if (!notice.success || !isUuid(notice.data.keyId)) return;
        this.keys
          .touch(notice.data.keyId, new Date(notice.data.at))
          .catch((e: unknown) => this.logger.warn({ err: e }, 'could not record a key use'));
      },
    });
  }

  onApplicationShutdown(): void {
    this.used?.unsubscribe();
  }

  async create(userId: string, body: unknown): Promise<ApiKeyCreated> {
    const input = checkWith(ApiKeyCreateSchema, body);
    if (!input.ok) throw AppError.validation(IntegrationsErrorCode.InvalidKey, input.message, input.errors);
    const secret = newKeySecret();
    const created = await this.keys.insertUnlessFull(
      userId,
      { ...input.value, prefix: secret.prefix, hash: secret.hash },
      INTEGRATIONS_LIMITS.apiKeysPerUserMax,
      this.clock.now(),
    );
    if (created === 'full') {
      throw AppError.conflict(IntegrationsErrorCode.KeyLimitReached, INTEGRATIONS_MESSAGES.keyLimitReached, {
        max: INTEGRATIONS_LIMITS.apiKeysPerUserMax,
      });
    }
    return { ...created, secret: secret.secret };
  }

  async list(userId: string): Promise<{ keys: ApiKey[] }> {
    return { keys: await this.keys.listLive(userId) };
  }

  async revoke(userId: string, keyId: string): Promise<{ id: string }> {
    if (!isUuid(keyId) || !(await this.keys.revoke(userId, keyId, this.clock.now()))) throw notFound();
    const notice: ApiKeyRevokedNotice = { keyId };
    this.nc.publish(API_KEY_REVOKED_SUBJECT, JSON.stringify(notice));
    // Out of this process before the answer, so a gateway hears of it no later than the caller does.
    await this.nc.flush();
    return { id: keyId };
  }

  async verify(hash: string): Promise<ApiKeyPrincipal> {
    const found = await this.keys.findLiveByHash(hash);
    if (!found) throw AppError.notFound(IntegrationsErrorCode.KeyNotFound, INTEGRATIONS_MESSAGES.keyInvalid);
    return found;
  }
}
