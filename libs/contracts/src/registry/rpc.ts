import type { ContactsRequests } from '../contacts/rpc.js';
import type { AccountRequests } from '../account/rpc.js';
import type { DashboardRequests } from '../dashboard/rpc.js';
import type { IntegrationsRequests } from '../integrations/rpc.js';
import type { JobsRequests } from '../jobs/rpc.js';
import type { MediaRequests } from '../media/rpc.js';
import type { OptOutsRequests } from '../jobs/rpc.js';
import type { SessionsRequests } from '../sessions/rpc.js';
import type { TemplatesRequests } from '../templates/rpc.js';
import { isSharded, type PingRequests } from '../common/rpc.js';

/**
 * Every request/reply subject with its payload types. A key is the logical subject; sessions keys are
 * sharded on the wire (`sessions.<shard>.<verb>`, see `subjectOf`).
 */
export interface RequestMap
  extends
    PingRequests,
    SessionsRequests,
    JobsRequests,
    MediaRequests,
    OptOutsRequests,
    TemplatesRequests,
    DashboardRequests,
    IntegrationsRequests,
    ContactsRequests,
    AccountRequests {}
export type RequestKey = keyof RequestMap;
export type RequestOf<K extends RequestKey> = RequestMap[K]['request'];
export type ReplyOf<K extends RequestKey> = RequestMap[K]['reply'];

/** The NATS subject of a logical request key: `sessions.connect` on shard 2 is `sessions.2.connect`. */
export function subjectOf(key: RequestKey, shard?: number): string {
  if (!isSharded(key)) return key;
  if (shard === undefined || !Number.isInteger(shard) || shard < 0) {
    throw new RangeError(`${key} is sharded: a shard index is required`);
  }
  // A sharded key is `sessions.<verb>`: the shard goes after the service.
  return `sessions.${shard}.${key.slice(key.indexOf('.') + 1)}`;
}

/** Requests one service makes of another for itself (pings, the job id scheme): they name no user. */
export function isServiceRequest(key: RequestKey): boolean {
  return key.endsWith('.ping') || key === 'jobs.idScheme' || key === 'integrations.keys.verify';
}

export interface RpcOptions {
  timeoutMs?: number;
  /** Required for sessions keys unless the transport derives it from the payload's userId. */
  shard?: number;
}

/** What a NATS client must offer for the typed helper below; service-kit implements it. */
export interface RpcTransport {
  request(key: RequestKey, payload: unknown, options?: RpcOptions): Promise<unknown>;
}

/** Typed request: the payload and the reply are tied to the subject, so they cannot drift apart. */
export function request<K extends RequestKey>(
  transport: RpcTransport,
  key: K,
  payload: RequestOf<K>,
  options?: RpcOptions,
): Promise<ReplyOf<K>> {
  return transport.request(key, payload, options) as Promise<ReplyOf<K>>;
}
