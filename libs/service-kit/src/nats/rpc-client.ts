import { randomUUID } from 'node:crypto';
import { headers, type Msg, type MsgHdrs, type NatsConnection } from '@nats-io/transport-node';
import {
  CommonErrorCode,
  ErrorKind,
  MESSAGES,
  isSharded,
  request as typedRequest,
  shardOf,
  subjectOf,
  type ReplyOf,
  type RequestKey,
  type RequestOf,
  type RpcOptions,
  type RpcTransport,
} from '@bns/contracts';
import { AppError } from '../errors/app-error.js';
import { outcomeOf, recordRpcClient } from '../metrics/metrics.js';
import { injectTraceHeaders, SpanKind, withSpan } from '../telemetry/telemetry.js';

interface NestReplyPacket {
  id?: string;
  response?: unknown;
  err?: unknown;
  isDisposed?: boolean;
}

/** The code of an RpcClient failure caused by a lost NATS connection (see `isRpcDisconnected`). */
export const RPC_DISCONNECTED = CommonErrorCode.NatsDisconnected;

/**
 * True when a request failed only because this process's NATS connection dropped: it says nothing
 * about the request itself. Retry after `rpc.whenConnected()` without counting it as a failure.
 */
export function isRpcDisconnected(err: unknown): boolean {
  return err instanceof AppError ? err.code === RPC_DISCONNECTED : (err as { code?: unknown } | null)?.code === RPC_DISCONNECTED;
}

/** How long after a reconnect "no responders" is taken for subscriptions still being restored. */
const RECONNECT_GRACE_MS = 3000;
const NO_RESPONDERS_RETRY_MS = 50;

function isNoResponders(err: unknown): boolean {
  const e = err as { isNoResponders?: () => boolean } | null;
  return typeof e?.isNoResponders === 'function' && e.isNoResponders();
}

function signal(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

function disconnected(subject: string): AppError {
  return new AppError(ErrorKind.Unavailable, RPC_DISCONNECTED, MESSAGES.serviceUnavailable, { details: { subject, retryAfterSeconds: 1 } });
}

/**
 * Request/reply over NATS in the wire format of Nest's NATS transport, with the trace context in the
 * headers and failures turned into AppError (no responder or a timeout → unavailable).
 *
 * When the connection drops, the replies of requests in flight are lost with it: waiting for them
 * would only wait out the full timeout. Those requests, and any made before the connection is back,
 * fail at once with RPC_DISCONNECTED.
 */
export class RpcClient implements RpcTransport {
  private readonly inFlight = new Set<(err: AppError) => void>();
  private up = true;
  private reconnectedAt = 0;
  private reconnected = signal();

  constructor(
    private readonly nc: NatsConnection,
    private readonly options: { shards: number; timeoutMs: number },
  ) {
    void this.watchConnection();
  }

  /** Whether the NATS connection is up right now. */
  get connected(): boolean {
    return this.up && !this.nc.isClosed();
  }

  /** Resolves when the connection is up (at once when it is); rejects after `timeoutMs`. */
  whenConnected(timeoutMs = this.options.timeoutMs): Promise<void> {
    if (this.connected) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(disconnected('(reconnect)')), timeoutMs);
      void this.reconnected.promise.then(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  private async watchConnection(): Promise<void> {
    for await (const status of this.nc.status()) {
      if (status.type === 'disconnect') {
        this.up = false;
        for (const fail of this.inFlight) fail(disconnected(status.server));
        this.inFlight.clear();
      } else if (status.type === 'reconnect') {
        this.up = true;
        this.reconnectedAt = Date.now();
        this.reconnected.resolve();
        this.reconnected = signal();
      }
    }
  }

  get shards(): number {
    return this.options.shards;
  }

  /** Typed entry point: prefer this over `request`. */
  call<K extends RequestKey>(key: K, payload: RequestOf<K>, options?: RpcOptions): Promise<ReplyOf<K>> {
    return typedRequest(this, key, payload, options);
  }

  async request(key: RequestKey, payload: unknown, options: RpcOptions = {}): Promise<unknown> {
    const shard = isSharded(key) ? (options.shard ?? this.shardFromPayload(key, payload)) : undefined;
    const subject = subjectOf(key, shard);
    return withSpan(`rpc ${subject}`, SpanKind.CLIENT, async (span) => {
      span.setAttribute('messaging.destination.name', subject);
      const hdrs = headers();
      injectTraceHeaders(hdrs);
      const timeout = options.timeoutMs ?? this.options.timeoutMs;
      const body = JSON.stringify({ pattern: subject, data: payload, id: randomUUID() });
      const started = performance.now();
      const done = (outcome: string) => recordRpcClient(subject, outcome, (performance.now() - started) / 1000);
      let raw;
      for (;;) {
        try {
          raw = await this.send(subject, body, timeout, hdrs);
          break;
        } catch (err) {
          if (err instanceof AppError) {
            done(outcomeOf(err));
            throw err;
          }
          // Right after a reconnect the responders may not have re-subscribed yet: that is the
          // reconnect still settling, not a missing service. Try again shortly, within the grace.
          if (isNoResponders(err) && Date.now() - this.reconnectedAt < RECONNECT_GRACE_MS) {
            await new Promise((r) => setTimeout(r, NO_RESPONDERS_RETRY_MS));
            continue;
          }
          const error = AppError.unavailable(undefined, { subject, cause: (err as Error).message });
          done(/timeout/i.test((err as Error).message) ? 'timeout' : outcomeOf(error));
          throw error;
        }
      }
      const packet = raw.json<NestReplyPacket>();
      if (packet.err !== undefined && packet.err !== null) {
        const error = AppError.fromUnknown(packet.err);
        done(outcomeOf(error));
        throw error;
      }
      done('ok');
      return packet.response;
    });
  }

  /** One try; rejects with RPC_DISCONNECTED when the connection is down or drops before the reply. */
  private async send(subject: string, body: string, timeout: number, hdrs: MsgHdrs): Promise<Msg> {
    if (!this.up) throw disconnected(subject);
    let fail: ((err: AppError) => void) | undefined;
    try {
      const reply = this.nc.request(subject, body, { timeout, headers: hdrs });
      const lost = new Promise<never>((_, reject) => {
        fail = reject;
        this.inFlight.add(reject);
      });
      // The losing side of the race must not surface as an unhandled rejection.
      reply.catch(() => undefined);
      return await Promise.race([reply, lost]);
    } finally {
      if (fail) this.inFlight.delete(fail);
    }
  }

  private shardFromPayload(key: RequestKey, payload: unknown): number {
    const userId = (payload as { userId?: unknown } | null)?.userId;
    if (typeof userId !== 'string' || userId === '') throw new RangeError(`${key} needs a userId to pick its shard`);
    return shardOf(userId, this.options.shards);
  }
}
