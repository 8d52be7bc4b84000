import { randomUUID } from 'node:crypto';
import { headers, type NatsConnection } from '@nats-io/transport-node';
import {
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
import { injectTraceHeaders, SpanKind, withSpan } from '../telemetry/telemetry.js';

interface NestReplyPacket {
  id?: string;
  response?: unknown;
  err?: unknown;
  isDisposed?: boolean;
}

/**
 * Request/reply over NATS in the wire format of Nest's NATS transport, with the trace context in the
 * headers and failures turned into AppError (no responder or a timeout → unavailable).
 */
export class RpcClient implements RpcTransport {
  constructor(
    private readonly nc: NatsConnection,
    private readonly options: { shards: number; timeoutMs: number },
  ) {}

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
      let raw;
      try {
        raw = await this.nc.request(subject, JSON.stringify({ pattern: subject, data: payload, id: randomUUID() }), {
          timeout: options.timeoutMs ?? this.options.timeoutMs,
          headers: hdrs,
        });
      } catch (err) {
        throw AppError.unavailable(undefined, { subject, cause: (err as Error).message });
      }
      const packet = raw.json<NestReplyPacket>();
      if (packet.err !== undefined && packet.err !== null) throw AppError.fromUnknown(packet.err);
      return packet.response;
    });
  }

  private shardFromPayload(key: RequestKey, payload: unknown): number {
    const userId = (payload as { userId?: unknown } | null)?.userId;
    if (typeof userId !== 'string' || userId === '') throw new RangeError(`${key} needs a userId to pick its shard`);
    return shardOf(userId, this.options.shards);
  }
}
