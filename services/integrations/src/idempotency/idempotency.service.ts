import { Inject, Injectable, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import {
  INTEGRATIONS_LIMITS,
  INTEGRATIONS_MESSAGES,
  IntegrationsErrorCode,
  type IdempotencyBeginReply,
  type IdempotencyBeginRequest,
  type IdempotencyFinishRequest,
} from '@bns/contracts';
import { AppError } from '@bns/service-kit';
import { CLOCK, type Clock } from '../clock/clock.js';
import { IdempotencyRepository } from './idempotency.repository.js';

/** A request the gateway held a key for and never finished (it died) is given up after this long. */
const HELD_MAX_MS = 60_000;

/**
 * Idempotency-Key of the /v1 POSTs: the first request holds the key, its answer is stored; the same
 * key with the same request answers that again, with another request it is a 409.
 */
@Injectable()
export class IdempotencyService implements OnApplicationBootstrap, OnApplicationShutdown {
  private pruner?: NodeJS.Timeout;

  constructor(
    private readonly keys: IdempotencyRepository,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  onApplicationBootstrap(): void {
    this.pruner = setInterval(
      () =>
        void this.keys
          .prune(new Date(this.clock.now().getTime() - INTEGRATIONS_LIMITS.idempotencyTtlMs))
          .catch(() => undefined),
      3600_000,
    );
    this.pruner.unref();
  }

  onApplicationShutdown(): void {
    clearInterval(this.pruner);
  }

  async begin({ userId, key, fingerprint }: IdempotencyBeginRequest): Promise<IdempotencyBeginReply> {
    // The first request's answer is stored just after it went out: a client retrying at once waits for
    // it (a moment) rather than hearing "in progress".
    const waitUntil = Date.now() + INTEGRATIONS_LIMITS.idempotencyWaitMs;
    for (;;) {
      const now = this.clock.now();
      const held = await this.keys.claim(
        userId,
        key,
        fingerprint,
        now,
        new Date(now.getTime() - INTEGRATIONS_LIMITS.idempotencyTtlMs),
      );
      if (held === true) return { state: 'new' };
      if (held.fingerprint !== fingerprint)
        throw AppError.conflict(IntegrationsErrorCode.IdempotencyConflict, INTEGRATIONS_MESSAGES.idempotencyConflict);
      if (held.status !== null && held.body !== null) return { state: 'done', status: held.status, body: held.body };
      if (await this.keys.retake(userId, key, fingerprint, now, new Date(now.getTime() - HELD_MAX_MS)))
        return { state: 'new' };
      if (Date.now() >= waitUntil)
        throw AppError.conflict(
          IntegrationsErrorCode.IdempotencyInProgress,
          INTEGRATIONS_MESSAGES.idempotencyInProgress,
        );
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  async finish({ userId, key, fingerprint, status, body }: IdempotencyFinishRequest): Promise<{ stored: true }> {
    await this.keys.finish(userId, key, fingerprint, status, body);
    return { stored: true };
  }

  async release({ userId, key, fingerprint }: IdempotencyBeginRequest): Promise<{ released: true }> {
    await this.keys.release(userId, key, fingerprint);
    return { released: true };
  }
}
