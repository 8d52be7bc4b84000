import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { ACCOUNT_LIMITS } from '@bns/contracts';
import type {
  DeliveryStatus,
  JobStatus,
  Webhook,
  WebhookDelivery,
  WebhookEventType,
  WebhookPayload,
} from '@bns/contracts';
import { row, rows, Transactions } from '@bns/service-kit';

export interface EndpointRow {
  id: string;
  user_id: string;
  url: string;
  description: string;
  events: WebhookEventType[];
  secret: string;
  previous_secret: string | null;
  previous_secret_expires_at: Date | null;
  enabled: boolean;
  disabled_reason: 'user' | 'failing' | null;
  failing_since: Date | null;
  created_at: Date;
}

interface DeliveryRow {
  id: string;
  webhook_id: string;
  event_type: string;
  status: DeliveryStatus;
  attempts: number;
  http_status: number | null;
  error: string | null;
  latency_ms: number | null;
  created_at: Date;
  last_attempt_at: Date | null;
  next_attempt_at: Date | null;
}

/** A claimed delivery with what sending it needs. */
export interface DueDelivery {
  id: string;
  endpoint_id: string;
  webhook_id: string;
  payload: WebhookPayload;
  attempts: number;
  event_at: Date;
  url: string;
  secret: string;
  previous_secret: string | null;
  previous_secret_expires_at: Date | null;
}

export const toWebhook = (r: EndpointRow): Webhook => ({
  id: r.id,
  url: r.url,
  events: r.events,
  description: r.description,
  enabled: r.enabled,
  disabledReason: r.disabled_reason,
  failingSince: r.failing_since?.toISOString() ?? null,
  previousSecretExpiresAt: r.previous_secret_expires_at?.toISOString() ?? null,
  createdAt: r.created_at.toISOString(),
});

const toDelivery = (r: DeliveryRow): WebhookDelivery => ({
  id: r.id,
  webhookId: r.webhook_id,
  eventType: r.event_type,
  status: r.status,
  attempts: r.attempts,
  httpStatus: r.http_status,
  error: r.error,
  latencyMs: r.latency_ms,
  createdAt: r.created_at.toISOString(),
  lastAttemptAt: r.last_attempt_at?.toISOString() ?? null,
  nextAttemptAt: r.next_attempt_at?.toISOString() ?? null,
});

const DELIVERY_COLUMNS =
  'id, webhook_id, event_type, status, attempts, http_status, error, latency_ms, created_at, last_attempt_at, next_attempt_at';

/** A delivery to insert: one per subscribed endpoint of the event's user. */
export interface NewDelivery {
  userId: string;
  eventId: string;
  webhookId: string;
  type: string;
  payload: WebhookPayload;
  eventAt: Date;
  /** A message.* event's message (its campaign's id): the metadata it was sent with joins the payload's data. */
  messageId?: string;
}

/**
 * Every query of webhook_endpoints, webhook_deliveries and campaign_states. User queries are bounded
 * by the owner. Times come from the service's clock as parameters.
 */
@Injectable()
export class WebhooksRepository {
  constructor(private readonly tx: Transactions) {}

  run<T>(work: (em: EntityManager) => Promise<T>): Promise<T> {
    return this.tx.run(work);
  }

  // ---- endpoints ----

  insertUnlessFull(
    userId: string,
    e: { url: string; events: string[]; description: string; secret: string },
    max: number,
    now: Date,
  ): Promise<EndpointRow | 'full'> {
    return this.tx.run(async (em) => {
      await em.query(`SELECT pg_advisory_xact_lock(hashtext('bns:webhooks:' || $1))`, [userId]);
      const [{ n }] = await rows<{ n: number }>(
        em,
        `SELECT count(*)::int AS n FROM webhook_endpoints WHERE user_id = $1`,
        [userId],
      );
      if (n >= max) return 'full';
      const [created] = await rows<EndpointRow>(
        em,
        `INSERT INTO webhook_endpoints (user_id, url, events, description, secret, created_at) VALUES ($1, $2, $3, $4, $5, $6) RETURNING *`,
        [userId, e.url, e.events, e.description, e.secret, now],
      );
      return created!;
    });
  }

  list(userId: string): Promise<EndpointRow[]> {
    return rows<EndpointRow>(
      this.tx.manager,
      `SELECT * FROM webhook_endpoints WHERE user_id = $1 ORDER BY created_at, id`,
      [userId],
    );
  }

  find(userId: string, id: string): Promise<EndpointRow | undefined> {
    return row<EndpointRow>(this.tx.manager, `SELECT * FROM webhook_endpoints WHERE user_id = $1 AND id = $2`, [
      userId,
      id,
    ]);
  }

  /** Changes the given fields; enabling clears the failing state and the reason it was disabled. */
  update(
    userId: string,
    id: string,
    changes: { url?: string; events?: string[]; enabled?: boolean },
  ): Promise<EndpointRow | undefined> {
    return row<EndpointRow>(
      this.tx.manager,
      `UPDATE webhook_endpoints SET
         url = coalesce($3, url),
         events = coalesce($4, events),
         enabled = coalesce($5, enabled),
         disabled_reason = CASE WHEN $5 IS NULL THEN disabled_reason WHEN $5 THEN NULL ELSE 'user' END,
         failing_since = CASE WHEN $5 THEN NULL ELSE failing_since END
       WHERE user_id = $1 AND id = $2 RETURNING *`,
      [userId, id, changes.url ?? null, changes.events ?? null, changes.enabled ?? null],
    );
  }

  rotate(userId: string, id: string, secret: string, previousUntil: Date): Promise<EndpointRow | undefined> {
    return row<EndpointRow>(
      this.tx.manager,
      `UPDATE webhook_endpoints SET previous_secret = secret, previous_secret_expires_at = $4, secret = $3 WHERE user_id = $1 AND id = $2 RETURNING *`,
      [userId, id, secret, previousUntil],
    );
  }

  async delete(userId: string, id: string): Promise<boolean> {
    return (
      (
        await rows(this.tx.manager, `DELETE FROM webhook_endpoints WHERE user_id = $1 AND id = $2 RETURNING id`, [
          userId,
          id,
        ])
      ).length > 0
    );
  }

  // ---- sealed secrets ----

  /** The key check row's sealed value, written as `sealed` when there is none yet (the first start with a key). */
  async keyCheck(sealed: string): Promise<string> {
    const [found] = await rows<{ sealed: string }>(
      this.tx.manager,
      `WITH made AS (INSERT INTO secret_key_check (id, sealed) VALUES (1, $1) ON CONFLICT (id) DO NOTHING RETURNING sealed)
       SELECT sealed FROM made UNION ALL SELECT sealed FROM secret_key_check WHERE id = 1 LIMIT 1`,
      [sealed],
    );
    return found!.sealed;
  }

  /** Endpoints whose secrets are still in plain text (stored before secrets were sealed). */
  plainSecrets(): Promise<Pick<EndpointRow, 'id' | 'secret' | 'previous_secret'>[]> {
    return rows(
      this.tx.manager,
      `SELECT id, secret, previous_secret FROM webhook_endpoints
        WHERE secret NOT LIKE 'v1.%' OR (previous_secret IS NOT NULL AND previous_secret NOT LIKE 'v1.%')`,
    );
  }

  /** Replaces a plain-text secret by its sealed value, unless it changed meanwhile. */
  async sealSecrets(
    id: string,
    plain: { secret: string; previous_secret: string | null },
    sealed: { secret: string; previous_secret: string | null },
  ): Promise<void> {
    await rows(
      this.tx.manager,
      `UPDATE webhook_endpoints SET secret = $4, previous_secret = $5
        WHERE id = $1 AND secret = $2 AND previous_secret IS NOT DISTINCT FROM $3`,
      [id, plain.secret, plain.previous_secret, sealed.secret, sealed.previous_secret],
    );
  }

  // ---- fan-out ----

  /** The status seen last of a campaign, replaced by `status` (locked for the transaction). */
  async swapCampaignStatus(
    em: EntityManager,
    userId: string,
    jobId: string,
    status: JobStatus,
    now: Date,
  ): Promise<JobStatus | undefined> {
    const [before] = await rows<{ status: JobStatus }>(
      em,
      `SELECT status FROM campaign_states WHERE user_id = $1 AND job_id = $2 FOR UPDATE`,
      [userId, jobId],
    );
    await rows(
      em,
      `INSERT INTO campaign_states (user_id, job_id, status, updated_at) VALUES ($1, $2, $3, $4)
       ON CONFLICT (user_id, job_id) DO UPDATE SET status = excluded.status, updated_at = excluded.updated_at`,
      [userId, jobId, status, now],
    );
    return before?.status;
  }

  /** Whether the user has an enabled endpoint subscribed to `type` (checked before asking another service for an event's details). */
  async subscribed(userId: string, type: WebhookEventType): Promise<boolean> {
    const found = await row(
      this.tx.manager,
      `SELECT 1 FROM webhook_endpoints WHERE user_id = $1 AND enabled AND $2 = ANY (events) LIMIT 1`,
      [userId, type],
    );
    return found !== undefined;
  }

  /** Users with an enabled endpoint subscribed to `type`. */
  async usersSubscribedTo(type: WebhookEventType): Promise<string[]> {
    const found = await rows<{ user_id: string }>(
      this.tx.manager,
      `SELECT DISTINCT user_id FROM webhook_endpoints WHERE enabled AND $1 = ANY (events)`,
      [type],
    );
    return found.map((f) => f.user_id);
  }

  /**
   * Up to when the user's opt-out list was turned into webhooks: the stored watermark, else the time
   * its first endpoint that wants contact.opted_out was added; undefined when none wants it.
   */
  async optOutWatermark(userId: string): Promise<Date | undefined> {
    const found = await row<{ at: Date | null }>(
      this.tx.manager,
      `SELECT coalesce(
         (SELECT seen_until FROM opt_out_watermarks WHERE user_id = $1),
         (SELECT min(created_at) FROM webhook_endpoints WHERE user_id = $1 AND enabled AND 'contact.opted_out' = ANY (events))
       ) AS at
        WHERE EXISTS (SELECT 1 FROM webhook_endpoints WHERE user_id = $1 AND enabled AND 'contact.opted_out' = ANY (events))`,
      [userId],
    );
    return found?.at ?? undefined;
  }

  async raiseOptOutWatermark(userId: string, at: Date): Promise<void> {
    await rows(
      this.tx.manager,
      `INSERT INTO opt_out_watermarks (user_id, seen_until) VALUES ($1, $2)
       ON CONFLICT (user_id) DO UPDATE SET seen_until = greatest(opt_out_watermarks.seen_until, excluded.seen_until)`,
      [userId, at],
    );
  }

  /** How many of the campaign's skipped recipients were turned into webhooks already (0 when none). */
  async skippedSeen(userId: string, jobId: string): Promise<number> {
    const found = await row<{ n: number }>(
      this.tx.manager,
      `SELECT skipped_seen AS n FROM campaign_states WHERE user_id = $1 AND job_id = $2`,
      [userId, jobId],
    );
    return found?.n ?? 0;
  }

  /** Raises the campaign's count of skipped recipients turned into webhooks (never lowers it). */
  async raiseSkippedSeen(em: EntityManager, userId: string, jobId: string, seen: number, now: Date): Promise<void> {
    await rows(
      em,
      `INSERT INTO campaign_states (user_id, job_id, status, updated_at, skipped_seen) VALUES ($1, $2, 'running', $4, $3)
       ON CONFLICT (user_id, job_id) DO UPDATE SET skipped_seen = greatest(campaign_states.skipped_seen, excluded.skipped_seen), updated_at = excluded.updated_at`,
      [userId, jobId, seen, now],
    );
  }

  /**
   * One delivery per enabled endpoint of the user subscribed to the event's type, due now. An event
   * handled again (redelivered) inserts nothing new: (endpoint, event) is unique. A /v1 message's
   * metadata is added to `data.metadata` in the same statement (no lookup when nobody subscribed).
   */
  async fanOut(em: EntityManager, d: NewDelivery, now: Date): Promise<number> {
    const inserted = await rows(
      em,
      `INSERT INTO webhook_deliveries (endpoint_id, user_id, event_id, webhook_id, event_type, payload, next_attempt_at, created_at, event_at)
       SELECT e.id, e.user_id, $2, $3, $4,
              coalesce(jsonb_set($5::jsonb, '{data,metadata}',
                (SELECT m.metadata FROM message_metadata m WHERE m.user_id = $1 AND m.message_id = $8)), $5::jsonb),
              $6, $6, $7 FROM webhook_endpoints e
        WHERE e.user_id = $1 AND e.enabled AND $4 = ANY (e.events)
       ON CONFLICT (endpoint_id, event_id) DO NOTHING RETURNING id`,
      [d.userId, d.eventId, d.webhookId, d.type, JSON.stringify(d.payload), now, d.eventAt, d.messageId ?? null],
    );
    return inserted.length;
  }

  /** A delivery to one endpoint regardless of its subscriptions (the test event). */
  async insertOne(endpoint: EndpointRow, d: NewDelivery, now: Date): Promise<WebhookDelivery> {
    const [created] = await rows<DeliveryRow>(
      this.tx.manager,
      `INSERT INTO webhook_deliveries (endpoint_id, user_id, event_id, webhook_id, event_type, payload, next_attempt_at, created_at, event_at)
       VALUES ($1, $2, $3, $4, $5, $6::jsonb, $7, $7, $8) RETURNING ${DELIVERY_COLUMNS}`,
      [endpoint.id, endpoint.user_id, d.eventId, d.webhookId, d.type, JSON.stringify(d.payload), now, d.eventAt],
    );
    return toDelivery(created!);
  }

  // ---- the queue ----

  /**
   * Claims up to `limit` due deliveries of enabled endpoints, at most one per endpoint and none of
   * `busy` (endpoints this replica is sending to): a slow endpoint holds one slot, never another's.
   * A claim is a lease: if this replica dies, the row is due again once `leaseUntil` passed.
   */
  claimDue(limit: number, busy: string[], now: Date, leaseUntil: Date): Promise<DueDelivery[]> {
    return rows<DueDelivery>(
      this.tx.manager,
      `WITH picked AS (
         SELECT d.id FROM webhook_deliveries d
          WHERE d.id IN (
            SELECT DISTINCT ON (x.endpoint_id) x.id FROM webhook_deliveries x
              JOIN webhook_endpoints e ON e.id = x.endpoint_id AND e.enabled
             WHERE x.status = 'pending' AND x.next_attempt_at <= $1 AND (x.lease_until IS NULL OR x.lease_until <= $1)
               AND NOT (x.endpoint_id = ANY ($3::uuid[]))
             ORDER BY x.endpoint_id, x.next_attempt_at, x.created_at)
            AND d.status = 'pending' AND (d.lease_until IS NULL OR d.lease_until <= $1)
          ORDER BY d.next_attempt_at
          LIMIT $2
          FOR UPDATE OF d SKIP LOCKED)
       UPDATE webhook_deliveries d SET lease_until = $4, attempts = d.attempts + 1
         FROM picked, webhook_endpoints e
        WHERE d.id = picked.id AND e.id = d.endpoint_id
       RETURNING d.id, d.endpoint_id, d.webhook_id, d.payload, d.attempts, d.event_at, e.url, e.secret, e.previous_secret, e.previous_secret_expires_at`,
      [now, limit, busy, leaseUntil],
    );
  }

  /** The earliest time a pending delivery of an enabled endpoint is due (the worker sleeps until then). */
  async nextDueAt(): Promise<Date | undefined> {
    const found = await row<{ at: Date | null }>(
      this.tx.manager,
      `SELECT min(greatest(d.next_attempt_at, coalesce(d.lease_until, d.next_attempt_at))) AS at FROM webhook_deliveries d
         JOIN webhook_endpoints e ON e.id = d.endpoint_id AND e.enabled WHERE d.status = 'pending'`,
    );
    return found?.at ?? undefined;
  }

  /** A 2xx: the delivery is done, and the endpoint is no longer failing. */
  async succeeded(d: DueDelivery, httpStatus: number, latencyMs: number, now: Date): Promise<void> {
    await this.tx.run(async (em) => {
      await rows(
        em,
        `UPDATE webhook_deliveries SET status = 'succeeded', http_status = $2, latency_ms = $3, error = NULL, last_attempt_at = $4, next_attempt_at = NULL, lease_until = NULL WHERE id = $1`,
        [d.id, httpStatus, latencyMs, now],
      );
      await rows(em, `UPDATE webhook_endpoints SET failing_since = NULL WHERE id = $1 AND failing_since IS NOT NULL`, [
        d.endpoint_id,
      ]);
    });
  }

  /**
   * A failed attempt: due again at `retryAt`, or failed for good when there is none. The endpoint is
   * failing since its first failure after a success, and disabled once that is before `disableBefore`.
   * Answers whether this disabled it.
   */
  async failed(
    d: DueDelivery,
    outcome: { httpStatus?: number; error: string; latencyMs: number },
    retryAt: Date | undefined,
    now: Date,
    disableBefore: Date,
  ): Promise<boolean> {
    return this.tx.run(async (em) => {
      await rows(
        em,
        `UPDATE webhook_deliveries SET status = $6, http_status = $2, latency_ms = $3, error = $4, last_attempt_at = $5, next_attempt_at = $7, lease_until = NULL WHERE id = $1`,
        [
          d.id,
          outcome.httpStatus ?? null,
          outcome.latencyMs,
          outcome.error,
          now,
          retryAt ? 'pending' : 'failed',
          retryAt ?? null,
        ],
      );
      const [endpoint] = await rows<{ disabled: boolean }>(
        em,
        `UPDATE webhook_endpoints SET failing_since = coalesce(failing_since, $2),
           enabled = CASE WHEN coalesce(failing_since, $2) <= $3 THEN false ELSE enabled END,
           disabled_reason = CASE WHEN coalesce(failing_since, $2) <= $3 THEN 'failing' ELSE disabled_reason END
         WHERE id = $1 RETURNING (disabled_reason = 'failing' AND NOT enabled) AS disabled`,
        [d.endpoint_id, now, disableBefore],
      );
      return endpoint?.disabled ?? false;
    });
  }

  // ---- the tab ----

  async deliveries(userId: string, endpointId: string, limit: number): Promise<WebhookDelivery[]> {
    const found = await rows<DeliveryRow>(
      this.tx.manager,
      `SELECT ${DELIVERY_COLUMNS} FROM webhook_deliveries WHERE user_id = $1 AND endpoint_id = $2 ORDER BY created_at DESC, id DESC LIMIT $3`,
      [userId, endpointId, limit],
    );
    return found.map(toDelivery);
  }

  /** Due again now, with its webhook-id and payload unchanged. */
  async resend(
    userId: string,
    endpointId: string,
    deliveryId: string,
    now: Date,
  ): Promise<WebhookDelivery | undefined> {
    const found = await row<DeliveryRow>(
      this.tx.manager,
      `UPDATE webhook_deliveries SET status = 'pending', next_attempt_at = $4, lease_until = NULL
        WHERE user_id = $1 AND endpoint_id = $2 AND id = $3 RETURNING ${DELIVERY_COLUMNS}`,
      [userId, endpointId, deliveryId, now],
    );
    return found ? toDelivery(found) : undefined;
  }

  /** Deliveries of the last `days` beyond the newest `keep` per endpoint are pruned, and finished campaigns' states. */
  async prune(before: Date): Promise<void> {
    await rows(this.tx.manager, `DELETE FROM webhook_deliveries WHERE status <> 'pending' AND created_at < $1`, [
      before,
    ]);
    await rows(this.tx.manager, `DELETE FROM campaign_states WHERE updated_at < $1`, [before]);
  }

  /**
   * One batch of the retention purge: finished deliveries (never one still due) older than their
   * owner's retention at `now` (the default without a setting, none with "keep"); how many went.
   */
  async purgeDeliveriesBatch(now: Date): Promise<number> {
    return (
      await rows<{ n: number }>(
        this.tx.manager,
        `WITH gone AS (
           DELETE FROM webhook_deliveries WHERE ctid = ANY (ARRAY(
             SELECT d.ctid FROM webhook_deliveries d LEFT JOIN retention_settings r ON r.user_id = d.user_id
              WHERE d.status <> 'pending'
                AND d.created_at < $1::timestamptz - make_interval(days => CASE WHEN r.user_id IS NULL THEN $2::int ELSE r.days END)
              LIMIT $3))
           RETURNING 1
         ) SELECT count(*)::int AS n FROM gone`,
        [now, ACCOUNT_LIMITS.retentionDefaultDays, ACCOUNT_LIMITS.deleteBatchRows],
      )
    )[0]!.n;
  }
}
