/**
 * The integrations service's numbers, once: API keys, webhooks and their deliveries, the /v1 API's
 * idempotency. The services, the gateway and the web all read them from here.
 */
export const INTEGRATIONS_LIMITS = {
  /** Live (not revoked) keys one user may hold. */
  apiKeysPerUserMax: 20,
  apiKeyNameMax: 100,
  /** Random bytes after `bns_` (base64url): 256 bits of entropy. */
  apiKeySecretBytes: 32,
  /** Characters of a key shown in lists (`bns_` and the first 8 of its random part). */
  apiKeyPrefixLength: 12,
  /** A replica may answer from its cache for this long without hearing of a revocation (a NATS outage). */
  apiKeyCacheTtlMs: 60_000,
  /** The gateway tells the integrations service a key was used at most this often per key and replica. */
  apiKeyUsedEveryMs: 60_000,
  webhooksPerUserMax: 10,
  webhookUrlMax: 2048,
  webhookDescriptionMax: 200,
  /** Bytes of the signing key (`whsec_` + base64 of them). */
  webhookSecretBytes: 32,
  /** Deliveries the tab lists per endpoint. */
  deliveriesShown: 100,
  /** One POST to an endpoint: connect, send and the answer, all within this. */
  webhookTimeoutMs: 10_000,
  /** Bytes of an endpoint's answer read (the rest is dropped, the connection closed). */
  webhookResponseMaxBytes: 64 * 1024,
  /** After a rotation, payloads carry the old secret's signature as well for this long. */
  webhookSecretOverlapMs: 24 * 3600_000,
  /** An endpoint whose deliveries all failed for this long is disabled. */
  webhookDisableAfterMs: 5 * 24 * 3600_000,
  /**
   * Waits before each retry of a failed delivery (Standard Webhooks' own schedule): about 27.5 h from
   * the first try to the last, each stretched or shrunk by up to `webhookRetryJitter`.
   */
  webhookRetryScheduleMs: [5_000, 5 * 60_000, 30 * 60_000, 2 * 3600_000, 5 * 3600_000, 10 * 3600_000, 10 * 3600_000],
  webhookRetryJitter: 0.2,
  /**
   * contact.opted_out: how often each replica reads the opt-out lists of users who want that event,
   * catching up notices it did not hear (core NATS), and how far before its watermark it reads again
   * (an opt-out committed late may carry an earlier time).
   */
  optOutSweepMs: 60_000,
  optOutSweepSlackMs: 60_000,
  /** How long an Idempotency-Key of a /v1 POST is remembered. */
  idempotencyTtlMs: 24 * 3600_000,
  /**
   * How long a request waits for the first one with its Idempotency-Key to be stored, when that one is
   * still in progress (a client retrying the moment it got the first answer), before 409.
   */
  idempotencyWaitMs: 2_000,
  /**
   * Metadata a /v1 message may carry (stored with it, echoed by GET /v1/messages/{id} and its
   * message.* webhooks): keys, each key's and value's length, and the whole object's JSON bytes.
   */
  messageMetadataKeysMax: 20,
  messageMetadataKeyMax: 100,
  messageMetadataValueMax: 500,
  messageMetadataBytesMax: 4096,
} as const;

export const API_KEY_PREFIX = 'bns_';
export const WEBHOOK_SECRET_PREFIX = 'whsec_';
