import { createInbox, type Msg, type MsgHdrs, type NatsConnection } from '@nats-io/transport-node';
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
import { SpanKind, traceHeaders, tracingEnabled, withSpan } from '../telemetry/telemetry.js';

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
  return err instanceof AppError
    ? err.code === RPC_DISCONNECTED
    : (err as { code?: unknown } | null)?.code === RPC_DISCONNECTED;
}

/** How long after a reconnect "no responders" is taken for subscriptions still being restored. */
const RECONNECT_GRACE_MS = 3000;
const NO_RESPONDERS_RETRY_MS = 50;

/** Why a request got no reply: no process listens on its subject, or none answered in time. */
class NoReply extends Error {
  constructor(readonly reason: 'no responders' | 'timeout') {
    super(reason);
  }
}

function isNoResponders(err: unknown): boolean {
  return err instanceof NoReply && err.reason === 'no responders';
}

interface Pending {
  resolve: (msg: Msg) => void;
  reject: (err: Error) => void;
  timer: NodeJS.Timeout;
  /** performance.now() when it was made. */
  at: number;
}

interface Outgoing {
  subject: string;
  body: string;
  reply: string;
  headers: MsgHdrs | undefined;
}

function signal(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

function disconnected(subject: string): AppError {
  return new AppError(ErrorKind.Unavailable, RPC_DISCONNECTED, MESSAGES.serviceUnavailable, {
    details: { subject, retryAfterSeconds: 1 },
  });
}

/**
 * Request/reply over NATS in the wire format of Nest's NATS transport, with the trace context in the
 * headers and failures turned into AppError (no responder or a timeout → unavailable).
 *
 * When the connection drops, the replies of requests in flight are lost with it: waiting for them
 * would only wait out the full timeout. Those requests, and any made before the connection is back,
 * fail at once with RPC_DISCONNECTED.
 *
 * Replies come back on one subscription (`<inbox>.*`) and are matched by the last token of the
 * reply subject, as nats.js's own `request` does, minus its per-request costs: that allocated an Error
 * (a stack trace) for every request even when it succeeded, plus a timer promise and two races. The
 * requests made in one turn of the event loop leave in one socket write (published together on
 * setImmediate): on the gateway's hot path each write to the broker was the largest single cost of a
 * request, and under load many requests arrive in the same turn.
 */
export class RpcClient implements RpcTransport {
  private readonly inbox = createInbox();
  private readonly pending = new Map<string, Pending>();
  private outgoing: Outgoing[] = [];
  private nextToken = 0;
  private nextId = 0;
  private up = true;
  private reconnectedAt = 0;
  private reconnected = signal();
  /** Sees how long each request's round trip took (`observeRoundTrips`). */
  private roundTrips?: (ms: number) => void;

  constructor(
    private readonly nc: NatsConnection,
    private readonly options: { shards: number; timeoutMs: number },
  ) {
    nc.subscribe(`${this.inbox}.*`, { callback: (err, msg) => (err ? undefined : this.onReply(msg)) });
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
        this.outgoing = [];
        for (const [token, p] of this.pending) {
          clearTimeout(p.timer);
          this.pending.delete(token);
          p.reject(disconnected(status.server));
        }
      } else if (status.type === 'reconnect') {
        this.up = true;
        this.reconnectedAt = Date.now();
        this.reconnected.resolve();
        this.reconnected = signal();
      }
    }
  }

  /**
   * `observer` hears how long every Nest request took, answered or not (ms): how long the services
   * behind this client keep a caller waiting (the gateway's load shedding judges its queue on that).
   * One observer; a later call replaces it.
   */
  observeRoundTrips(observer: (ms: number) => void): void {
    this.roundTrips = observer;
  }

  /** How many requests have waited longer than `ms` for their reply so far (a backend that stalls answers none). */
  waitingLongerThan(ms: number): number {
    const before = performance.now() - ms;
    let n = 0;
    // In the order they were made: the oldest first.
    for (const p of this.pending.values()) {
      if (p.at > before) break;
      n++;
    }
    return n;
  }

  get shards(): number {
    return this.options.shards;
  }

  /** Typed entry point: prefer this over `request`. */
  call<K extends RequestKey>(key: K, payload: RequestOf<K>, options?: RpcOptions): Promise<ReplyOf<K>> {
    return typedRequest(this, key, payload, options);
  }

  request(key: RequestKey, payload: unknown, options: RpcOptions = {}): Promise<unknown> {
    let subject: string;
    try {
      subject = subjectOf(key, isSharded(key) ? (options.shard ?? this.shardFromPayload(key, payload)) : undefined);
    } catch (err) {
      return Promise.reject(err as Error);
    }
    // Without an exporter a span is a no-op that still costs each request a context and a closure.
    if (!tracingEnabled()) return this.exchange(subject, payload, options, undefined);
    return withSpan(`rpc ${subject}`, SpanKind.CLIENT, (span) => {
      span.setAttribute('messaging.destination.name', subject);
      return this.exchange(subject, payload, options, traceHeaders());
    });
  }

  /** The request and its reply, timed and counted; failures as AppError. */
  private async exchange(
    subject: string,
    payload: unknown,
    options: RpcOptions,
    hdrs: MsgHdrs | undefined,
  ): Promise<unknown> {
    const timeout = options.timeoutMs ?? this.options.timeoutMs;
    // Nest's wire format needs an id to take a message for a request; it only echoes it back (replies
    // are matched by their subject), so a counter does: no random UUID per request.
    // The deadline tells the service when this caller gives up: a request it gets later is not acted on
    // (KitNatsServer), since the caller has answered "unavailable" by then.
    const body = JSON.stringify({
      pattern: subject,
      data: payload,
      id: (this.nextId = (this.nextId + 1) % Number.MAX_SAFE_INTEGER).toString(36),
      deadline: Date.now() + timeout,
    });
    const started = performance.now();
    const done = (outcome: string) => {
      const ms = performance.now() - started;
      recordRpcClient(subject, outcome, ms / 1000);
      this.roundTrips?.(ms);
    };
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
        done(err instanceof NoReply && err.reason === 'timeout' ? 'timeout' : outcomeOf(error));
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
  }

  /**
   * A request in another protocol than Nest's (a JetStream publish, say), on the same shared inbox
   * and in the same socket write as the other requests of this turn: the reply message as it came.
   * Failures are AppErrors: RPC_DISCONNECTED, or unavailable when nobody listens or answers in time.
   * Not counted in bns_rpc_client_*: such a subject can name a user (a KV key), and labels never do.
   */
  requestMessage(subject: string, body: string, options: { headers?: MsgHdrs; timeoutMs?: number } = {}): Promise<Msg> {
    return this.send(subject, body, options.timeoutMs ?? this.options.timeoutMs, options.headers).catch(
      (err: unknown) => {
        throw err instanceof AppError
          ? err
          : AppError.unavailable(undefined, { subject, cause: (err as Error).message });
      },
    );
  }

  /** One try; rejects with RPC_DISCONNECTED when the connection is down or drops before the reply. */
  private send(subject: string, body: string, timeout: number, headers: MsgHdrs | undefined): Promise<Msg> {
    if (!this.up) return Promise.reject(disconnected(subject));
    return new Promise<Msg>((resolve, reject) => {
      const token = (this.nextToken = (this.nextToken + 1) % Number.MAX_SAFE_INTEGER).toString(36);
      const timer = setTimeout(() => {
        this.pending.delete(token);
        reject(new NoReply('timeout'));
      }, timeout);
      this.pending.set(token, { resolve, reject, timer, at: performance.now() });
      if (this.outgoing.push({ subject, body, reply: `${this.inbox}.${token}`, headers }) === 1)
        setImmediate(this.publishOutgoing);
    });
  }

  private readonly publishOutgoing = (): void => {
    const batch = this.outgoing;
    this.outgoing = [];
    for (const { subject, body, reply, headers } of batch) {
      try {
        this.nc.publish(subject, body, { reply, headers });
      } catch (err) {
        // a closed connection, a payload over max_payload: this request fails, the others go out
        this.settle(reply.slice(this.inbox.length + 1), err as Error);
      }
    }
  };

  private onReply(msg: Msg): void {
    const token = msg.subject.slice(this.inbox.length + 1);
    // The broker answers a request nobody listens to with an empty 503 status message.
    this.settle(token, msg.data.length === 0 && msg.headers?.code === 503 ? new NoReply('no responders') : msg);
  }

  private settle(token: string, outcome: Msg | Error): void {
    const p = this.pending.get(token);
    if (!p) return; // timed out or failed already: a late reply is dropped
    this.pending.delete(token);
    clearTimeout(p.timer);
    if (outcome instanceof Error) p.reject(outcome);
    else p.resolve(outcome);
  }

  private shardFromPayload(key: RequestKey, payload: unknown): number {
    const userId = (payload as { userId?: unknown } | null)?.userId;
    if (typeof userId !== 'string' || userId === '') throw new RangeError(`${key} needs a userId to pick its shard`);
    return shardOf(userId, this.options.shards);
  }
}
