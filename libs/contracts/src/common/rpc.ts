import type { PingRequestSchema, z } from './schema.js';

/** Services that answer request/reply over NATS. */
export const SERVICES = ['sessions', 'jobs', 'templates', 'dashboard', 'integrations', 'contacts'] as const;
export type ServiceName = (typeof SERVICES)[number] | 'gateway';

/** Nothing to say; an object so every request has one (schema: `PingRequestSchema`). */
export type PingRequest = z.output<typeof PingRequestSchema>;
export interface PingReply {
  service: ServiceName;
  shard?: number;
  shards?: number;
  instance: string;
  version: string;
  uptimeSeconds: number;
}

export interface PingRequests {
  'sessions.ping': { request: PingRequest; reply: PingReply };
  'jobs.ping': { request: PingRequest; reply: PingReply };
  'templates.ping': { request: PingRequest; reply: PingReply };
  'dashboard.ping': { request: PingRequest; reply: PingReply };
  'integrations.ping': { request: PingRequest; reply: PingReply };
  'contacts.ping': { request: PingRequest; reply: PingReply };
}

const SHARDED_SERVICE = 'sessions.';

/** Sessions keys are sharded on the wire: `sessions.<shard>.<verb>` (registry `subjectOf`). */
export function isSharded(key: string): boolean {
  return key.startsWith(SHARDED_SERVICE);
}

export function pingKeyOf(service: (typeof SERVICES)[number]): keyof PingRequests {
  return `${service}.ping`;
}
