import { createHash } from 'node:crypto';
import { Logger } from '@nestjs/common';
import type { NatsConnection, Subscription } from '@nats-io/transport-node';
import {
  API_KEY_REVOKED_SUBJECT,
  API_KEY_USED_SUBJECT,
  ApiKeyRevokedNoticeSchema,
  ErrorKind,
  INTEGRATIONS_LIMITS,
  looksLikeApiKey,
  type ApiKeyPrincipal,
  type ApiKeyUsedNotice,
} from '@bns/contracts';
import { AppError, type RpcClient } from '@bns/service-kit';

/** How long a key the integrations service did not know is answered "no" from memory. */
const UNKNOWN_TTL_MS = 30_000;
const MAX_ENTRIES = 50_000;

interface Known {
  principal: ApiKeyPrincipal;
  until: number;
}

/**
 * API keys as this gateway replica knows them: a key is asked of the integrations service once (by
 * the SHA-256 of its secret; the secret never leaves the gateway) and then answered from memory, so
 * a request costs no NATS round trip. Every replica subscribes to revocations (no queue group) and
 * drops a revoked key the moment the notice arrives; a replica that lost its NATS connection may
 * have missed some, so it forgets everything when it reconnects, and no entry lives longer than
 * INTEGRATIONS_LIMITS.apiKeyCacheTtlMs whatever happens.
 */
export class ApiKeyVerifier {
  private readonly logger = new Logger('ApiKeyVerifier');
  private readonly known = new Map<string, Known>();
  private readonly byKeyId = new Map<string, string>();
  private readonly unknown = new Map<string, number>();
  private readonly inFlight = new Map<string, Promise<ApiKeyPrincipal | undefined>>();
  private readonly reported = new Map<string, number>();
  private readonly subscription: Subscription;
  /** Bumped by every revocation and reconnect: an answer asked for before one is not kept. */
  private generation = 0;

  constructor(
    private readonly nc: NatsConnection,
    private readonly rpc: RpcClient,
    private readonly now: () => number = Date.now,
  ) {
    this.subscription = nc.subscribe(API_KEY_REVOKED_SUBJECT, {
      callback: (err, msg) => {
        if (err) return;
        let body: unknown;
        try {
          body = msg.json();
        } catch {
          return;
        }
        const notice = ApiKeyRevokedNoticeSchema.safeParse(body);
        if (notice.success) this.forget(notice.data.keyId);
      },
    });
    void this.watchConnection();
  }

  /** The key's principal, or undefined when it is not a valid live key. Throws only when the integrations service cannot answer. */
  async verify(token: string): Promise<ApiKeyPrincipal | undefined> {
    if (!looksLikeApiKey(token)) return undefined;
    const hash = createHash('sha256').update(token).digest('hex');
    const now = this.now();
    const hit = this.known.get(hash);
    if (hit && hit.until > now) return this.used(hit.principal, now);
    const miss = this.unknown.get(hash);
    if (miss !== undefined && miss > now) return undefined;
    let asking = this.inFlight.get(hash);
    if (!asking) {
      asking = this.ask(hash).finally(() => this.inFlight.delete(hash));
      this.inFlight.set(hash, asking);
    }
    const principal = await asking;
    return principal && this.used(principal, this.now());
  }

  /** Drops a key (a revocation heard). */
  forget(keyId: string): void {
    this.generation++;
    const hash = this.byKeyId.get(keyId);
    if (hash === undefined) return;
    this.byKeyId.delete(keyId);
    this.known.delete(hash);
  }

  close(): void {
    this.subscription.unsubscribe();
  }

  private async ask(hash: string): Promise<ApiKeyPrincipal | undefined> {
    const generation = this.generation;
    try {
      const principal = await this.rpc.call('integrations.keys.verify', { hash });
      if (generation === this.generation) this.remember(hash, principal);
      return principal;
    } catch (err) {
      if (err instanceof AppError && err.kind === ErrorKind.NotFound) {
        if (this.unknown.size >= MAX_ENTRIES) this.unknown.clear();
        this.unknown.set(hash, this.now() + UNKNOWN_TTL_MS);
        return undefined;
      }
      throw err;
    }
  }

  private remember(hash: string, principal: ApiKeyPrincipal): void {
    if (this.known.size >= MAX_ENTRIES) {
      this.known.clear();
      this.byKeyId.clear();
    }
    this.known.set(hash, { principal, until: this.now() + INTEGRATIONS_LIMITS.apiKeyCacheTtlMs });
    this.byKeyId.set(principal.keyId, hash);
  }

  /** Tells the integrations service the key was used, at most once a minute per key from this replica. */
  private used(principal: ApiKeyPrincipal, now: number): ApiKeyPrincipal {
    const last = this.reported.get(principal.keyId);
    if (last === undefined || now - last >= INTEGRATIONS_LIMITS.apiKeyUsedEveryMs) {
      if (this.reported.size >= MAX_ENTRIES) this.reported.clear();
      this.reported.set(principal.keyId, now);
      const notice: ApiKeyUsedNotice = { keyId: principal.keyId, at: new Date(now).toISOString() };
      try {
        this.nc.publish(API_KEY_USED_SUBJECT, JSON.stringify(notice));
      } catch (err) {
        this.logger.debug({ err }, 'could not report a key use');
      }
    }
    return principal;
  }

  private async watchConnection(): Promise<void> {
    for await (const status of this.nc.status()) {
      if (status.type === 'reconnect' || status.type === 'disconnect') {
        this.generation++;
        this.known.clear();
        this.byKeyId.clear();
      }
    }
  }
}
