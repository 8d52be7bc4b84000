import { RpcUserIdSchema, z } from '../common/schema.js';

/**
 * Idempotency of /v1 POSTs (same key + same request → the same answer; same key + another request →
 * 409). The gateway holds no state: the integrations service keeps each key's request fingerprint and
 * answer for INTEGRATIONS_LIMITS.idempotencyTtlMs.
 */
export const IdempotencyBeginRequestSchema = z.object({
  userId: RpcUserIdSchema,
  key: z.string().min(1).max(200),
  /** SHA-256 (hex) of method, path and body: what "the same request" means. */
  fingerprint: z.string().regex(/^[0-9a-f]{64}$/),
});
export type IdempotencyBeginRequest = z.output<typeof IdempotencyBeginRequestSchema>;
/** `new`: go ahead (the key is now held); `done`: answer what the first request answered. */
export type IdempotencyBeginReply = { state: 'new' } | { state: 'done'; status: number; body: string };

export const IdempotencyFinishRequestSchema = IdempotencyBeginRequestSchema.extend({
  status: z.int().min(100).max(599),
  body: z.string().max(512 * 1024),
});
export type IdempotencyFinishRequest = z.output<typeof IdempotencyFinishRequestSchema>;
/** A request that failed in a way worth retrying (5xx): the key is released. */
export const IdempotencyReleaseRequestSchema = IdempotencyBeginRequestSchema;
