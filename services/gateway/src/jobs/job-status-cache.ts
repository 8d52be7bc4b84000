import { Inject, Injectable } from '@nestjs/common';
import { isUuid } from '@bns/contracts';
import { SERVICE_ENV } from '@bns/service-kit';
import type { GatewayEnv } from '../config/env.js';

/** Taken before a job-status request goes to the jobs service: what the gateway had heard of the user by then. */
export interface StatusTicket {
  readonly gen: number;
  readonly epoch: number;
}

interface Known {
  version: string;
  gen: number;
  epoch: number;
  /** `performance.now()` when it was learned. */
  at: number;
  /** `performance.now()` past which it is not trusted: JOB_STATUS_CACHE_MS after `at`, less up to TTL_JITTER of it. */
  until: number;
}

/**
 * Each entry lives JOB_STATUS_CACHE_MS less a random part of up to this share of it, so entries learned
 * together (a thousand pollers after a reconnect forgot everything, say) are not all asked for again
 * in the same instant, and again one lifetime later, for ever.
 */
const TTL_JITTER = 0.25;

/** Users whose event count is kept; past it every count is dropped and every entry forgotten. */
const USERS_MAX = 100_000;
/** What `Known.version` holds for a job the jobs service said the user does not have: never a real version. */
const MISSING = '';

/**
 * The current version (the ETag) of jobs lately polled, by user and job, so a poller revalidating an
 * unchanged job gets its 304 from this replica's memory: no NATS round trip, no database read (issue 17).
 *
 * It is sound because every change a job-status answer shows comes with an event for the job's user
 * (progress, log line, message status), and the gateway hears every event (the realtime subscription,
 * on every replica): an event of a user forgets what is known of all that user's jobs, and so does a
 * pause, resume or cancel through this replica once answered. A version learned from a reply is kept
 * only if nothing of the user was heard while the request was out (the ticket), so an answer read
 * before a change is never kept after it. Events missed while NATS was away: a reconnect forgets
 * everything. Backstops: an entry lives `JOB_STATUS_CACHE_MS` at most (a change without an event of
 * its own, such as the lane's next slot booked a moment before its send, shows by then), and at most
 * `JOB_STATUS_CACHE_MAX` are kept. Keys hold the user: one user's entry never answers another's poll.
 *
 * A job the user does not have (another user's, or no job at all) is remembered as missing the same
 * way, so a client polling a wrong or stale id is answered 404 from memory rather than costing the
 * jobs service a read per poll. That stays true: a job id is made by the jobs service and first seen
 * in the answer to the start that committed it, and jobs are never deleted. A start of the user comes
 * with events, which forget the entry anyway.
 */
@Injectable()
export class JobStatusCache {
  private readonly known = new Map<string, Known>();
  /** Events heard per user (only users heard of since the last reset). */
  private readonly gens = new Map<string, number>();
  private epoch = 0;
  private readonly ttlMs: number;
  private readonly max: number;

  constructor(@Inject(SERVICE_ENV) env: Pick<GatewayEnv, 'JOB_STATUS_CACHE_MS' | 'JOB_STATUS_CACHE_MAX'>) {
    this.ttlMs = env.JOB_STATUS_CACHE_MS;
    this.max = env.JOB_STATUS_CACHE_MAX;
  }

  get enabled(): boolean {
    return this.ttlMs > 0;
  }

  ticket(userId: string): StatusTicket {
    return { gen: this.gens.get(userId) ?? 0, epoch: this.epoch };
  }

  /** The job's version as last answered, when nothing of its user was heard since and it is fresh. */
  version(userId: string, jobId: string): string | undefined {
    const version = this.fresh(userId, jobId);
    return version === MISSING ? undefined : version;
  }

  /** Whether the jobs service lately answered that the user has no such job (and nothing of the user was heard since). */
  missing(userId: string, jobId: string): boolean {
    return this.fresh(userId, jobId) === MISSING;
  }

  /** The jobs service answered `version`: kept unless something of the user was heard since `ticket`. */
  remember(userId: string, jobId: string, version: string, ticket: StatusTicket): void {
    if (version !== MISSING) this.keep(userId, jobId, version, ticket);
  }

  /** The jobs service answered that the user has no job `jobId`: kept as `remember` keeps a version, for ids of the services' form only (bounded keys). */
  rememberMissing(userId: string, jobId: string, ticket: StatusTicket): void {
    if (isUuid(jobId)) this.keep(userId, jobId, MISSING, ticket);
  }

  private fresh(userId: string, jobId: string): string | undefined {
    if (!this.enabled) return undefined;
    const key = keyOf(userId, jobId);
    const entry = this.known.get(key);
    if (!entry) return undefined;
    if (entry.epoch === this.epoch && entry.gen === (this.gens.get(userId) ?? 0) && performance.now() < entry.until) return entry.version;
    this.known.delete(key);
    return undefined;
  }

  private keep(userId: string, jobId: string, version: string, ticket: StatusTicket): void {
    if (!this.enabled || ticket.epoch !== this.epoch || ticket.gen !== (this.gens.get(userId) ?? 0)) return;
    const key = keyOf(userId, jobId);
    this.known.delete(key);
    const at = performance.now();
    this.known.set(key, { version, gen: ticket.gen, epoch: ticket.epoch, at, until: at + this.ttlMs * (1 - TTL_JITTER * Math.random()) });
    if (this.known.size > this.max) this.known.delete(this.known.keys().next().value!);
    this.dropExpired();
  }

  /**
   * Forgets the entries older than JOB_STATUS_CACHE_MS, oldest first: the map is in the order entries
   * were learned, so this stops at the first fresh one. Without it an entry nobody asks for again (a
   * poll of a wrong id, a closed tab) stayed until pushed out by JOB_STATUS_CACHE_MAX others, and kept
   * the realtime subscription reading whose every event is (see `heardWhileEmpty`).
   */
  private dropExpired(): void {
    const before = performance.now() - this.ttlMs;
    for (const [key, entry] of this.known) {
      if (entry.at >= before) return;
      this.known.delete(key);
    }
  }

  /** Something of the user's changed (an event, or a change made through this replica): their entries are stale. */
  changed(userId: string): void {
    if (this.gens.size >= USERS_MAX && !this.gens.has(userId)) {
      this.forgetAll();
      return;
    }
    this.gens.set(userId, (this.gens.get(userId) ?? 0) + 1);
  }

  /**
   * A change of the user's jobs made through this replica (pause, resume, cancel): once it is answered
   * (or failed, when it may still have happened), the user's next poll here asks the jobs service, so
   * it shows the change even before its event arrives.
   */
  async changing<T>(userId: string, change: Promise<T>): Promise<T> {
    try {
      return await change;
    } finally {
      this.changed(userId);
    }
  }

  /**
   * An event of some user was heard, and the caller would rather not read whose: when nothing is known,
   * the epoch moves on (a request out now keeps nothing it learns) and the event need not be parsed at
   * all. Returns false when something is known: then the caller reads the user and says `changed`.
   */
  heardWhileEmpty(): boolean {
    this.dropExpired();
    if (this.known.size > 0) return false;
    this.epoch++;
    return true;
  }

  /** Events may have been missed (NATS reconnected): nothing known is trusted any more. */
  forgetAll(): void {
    this.epoch++;
    this.gens.clear();
    this.known.clear();
  }

  get size(): number {
    return this.known.size;
  }
}

const keyOf = (userId: string, jobId: string) => `${userId}\u0000${jobId}`;
