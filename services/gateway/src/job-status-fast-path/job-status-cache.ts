import { Inject, Injectable, type OnModuleInit } from '@nestjs/common';
import type { NatsConnection } from '@nats-io/transport-node';
import { isUuid } from '@bns/contracts';
import { NATS_CONNECTION, RpcClient, SERVICE_ENV } from '@bns/service-kit';
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
  /** `performance.now()` from which a poll answered from it also asks the jobs service, in the background. */
  refreshAt: number;
  refreshing: boolean;
  /** The whole 200 answer of `version` (`{"success":true,"job":…}`), when one was read and there was room for it. */
  body?: Buffer;
}

/** What a poll without a current validator is answered from memory: the version and its whole answer. */
export interface KnownAnswer {
  readonly version: string;
  readonly body: Buffer;
}

/**
 * Each entry lives JOB_STATUS_CACHE_MS less a random part of up to this share of it, so entries nobody
 * polls in time (see REFRESH_FROM) and that were learned together do not all go in the same instant.
 */
const TTL_JITTER = 0.1;
/**
 * Refresh ahead: the first poll answered from an entry past REFRESH_FROM + up to REFRESH_SPREAD of
 * JOB_STATUS_CACHE_MS (5 to 8 s of 10) is still answered from memory, and the job's version is asked of the
 * jobs service behind it; its answer renews the entry. A poller keeps its entry for as long as it polls
 * faster than the window before expiry (2 s and more at the default), so its polls never wait for a
 * re-ask, and the re-asks of pollers that started together (a reconnect, a warm-up) spread over 3 s
 * instead of falling due, and holding up their polls, together.
 */
const REFRESH_FROM = 0.5;
const REFRESH_SPREAD = 0.3;
/** Refreshes out at once, at most: past it a due entry waits for a later poll, or expires and is asked inline. */
const REFRESHES_MAX_IN_FLIGHT = 64;

/** Asks the jobs service for the job's current version (JobStatusRefresher). */
export type RefreshVersion = (userId: string, jobId: string, version: string) => Promise<string>;

/** Users whose event count is kept; past it every count is dropped and every entry forgotten. */
const USERS_MAX = 100_000;
/** What `Known.version` holds for a job the jobs service said the user does not have: never a real version. */
const MISSING = '';
/** One answer larger than this share of JOB_STATUS_CACHE_BYTES is not kept (a job with very long lists). */
const BODY_SHARE_MAX = 1 / 16;

/**
 * The current version (the ETag) of jobs lately polled, by user and job, so a poller revalidating an
 * unchanged job gets its 304 from this replica's memory: no NATS round trip, no database read.
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
 * The whole answer of the version is kept beside it (JOB_STATUS_CACHE_BYTES in all, the oldest
 * learned dropped first), so a poll without a validator, or with an old one, gets its 200 from memory
 * too: a version stands for one answer (the jobs service digests the answer's head, and its lists
 * only grow with the counts in it), so the answer kept for a version is the answer the jobs service
 * would give for it.
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
  private readonly bodyMax: number;
  /** Bytes of the answers kept. */
  private bodyBytes = 0;
  private refresh?: RefreshVersion;
  private refreshesInFlight = 0;

  constructor(
    @Inject(SERVICE_ENV)
    env: Pick<GatewayEnv, 'JOB_STATUS_CACHE_MS' | 'JOB_STATUS_CACHE_MAX'> &
      Partial<Pick<GatewayEnv, 'JOB_STATUS_CACHE_BYTES'>>,
  ) {
    this.ttlMs = env.JOB_STATUS_CACHE_MS;
    this.max = env.JOB_STATUS_CACHE_MAX;
    this.bodyMax = env.JOB_STATUS_CACHE_BYTES ?? 0;
  }

  get enabled(): boolean {
    return this.ttlMs > 0;
  }

  ticket(userId: string): StatusTicket {
    return { gen: this.gens.get(userId) ?? 0, epoch: this.epoch };
  }

  /** Lets polls answered from memory refresh their entry ahead of its expiry (see REFRESH_FROM). */
  refreshWith(refresh: RefreshVersion): void {
    this.refresh = refresh;
  }

  /**
   * The job's version as last answered, when nothing of its user was heard since and it is fresh. Past
   * its refresh point, the first call also asks the jobs service for the version, in the background.
   */
  version(userId: string, jobId: string): string | undefined {
    return this.current(userId, jobId)?.version;
  }

  /** The whole answer of the job's current version, as `version` finds it, when it is kept. */
  answer(userId: string, jobId: string): KnownAnswer | undefined {
    const entry = this.current(userId, jobId);
    return entry?.body && { version: entry.version, body: entry.body };
  }

  /** The fresh entry of a job the user has; past its refresh point, the first call refreshes it in the background. */
  private current(userId: string, jobId: string): Known | undefined {
    const entry = this.fresh(userId, jobId);
    if (entry === undefined || entry.version === MISSING) return undefined;
    if (
      !entry.refreshing &&
      this.refresh !== undefined &&
      this.refreshesInFlight < REFRESHES_MAX_IN_FLIGHT &&
      performance.now() >= entry.refreshAt
    ) {
      this.refreshAhead(this.refresh, entry, userId, jobId);
    }
    return entry;
  }

  /** Whether the jobs service lately answered that the user has no such job (and nothing of the user was heard since). */
  missing(userId: string, jobId: string): boolean {
    return this.fresh(userId, jobId)?.version === MISSING;
  }

  /** As a poll that went to the jobs service would: the answer is kept only if nothing of the user was heard while it was out. */
  private refreshAhead(refresh: RefreshVersion, entry: Known, userId: string, jobId: string): void {
    entry.refreshing = true;
    this.refreshesInFlight++;
    const ticket = this.ticket(userId);
    refresh(userId, jobId, entry.version)
      .then(
        (version) => this.remember(userId, jobId, version, ticket),
        // Counted by the RPC client's metrics; the entry stays until it expires, and a poll after that asks inline.
        () => undefined,
      )
      .finally(() => this.refreshesInFlight--);
  }

  /**
   * The jobs service answered `version` (and `body`, its whole answer, when it sent one): kept unless
   * something of the user was heard since `ticket`. An answer kept for the same version stays.
   */
  remember(userId: string, jobId: string, version: string, ticket: StatusTicket, body?: Buffer): void {
    if (version !== MISSING) this.keep(userId, jobId, version, ticket, body);
  }

  /** The jobs service answered that the user has no job `jobId`: kept as `remember` keeps a version, for ids of the services' form only (bounded keys). */
  rememberMissing(userId: string, jobId: string, ticket: StatusTicket): void {
    if (isUuid(jobId)) this.keep(userId, jobId, MISSING, ticket);
  }

  private fresh(userId: string, jobId: string): Known | undefined {
    if (!this.enabled) return undefined;
    const key = keyOf(userId, jobId);
    const entry = this.known.get(key);
    if (!entry) return undefined;
    if (entry.epoch === this.epoch && entry.gen === (this.gens.get(userId) ?? 0) && performance.now() < entry.until)
      return entry;
    this.drop(key, entry);
    return undefined;
  }

  private keep(userId: string, jobId: string, version: string, ticket: StatusTicket, body?: Buffer): void {
    if (!this.enabled || ticket.epoch !== this.epoch || ticket.gen !== (this.gens.get(userId) ?? 0)) return;
    const key = keyOf(userId, jobId);
    const before = this.known.get(key);
    if (before) this.drop(key, before);
    // A version stands for one answer: the one read before for it still holds.
    const kept = body ?? (before?.version === version ? before.body : undefined);
    const at = performance.now();
    const entry: Known = {
      version,
      gen: ticket.gen,
      epoch: ticket.epoch,
      at,
      until: at + this.ttlMs * (1 - TTL_JITTER * Math.random()),
      refreshAt: at + this.ttlMs * (REFRESH_FROM + REFRESH_SPREAD * Math.random()),
      refreshing: false,
    };
    if (kept !== undefined && version !== MISSING && kept.length <= this.bodyMax * BODY_SHARE_MAX) {
      entry.body = kept;
      this.bodyBytes += kept.length;
    }
    this.known.set(key, entry);
    if (this.known.size > this.max) {
      const [oldest, old] = this.known.entries().next().value!;
      this.drop(oldest, old);
    }
    this.dropExpired();
    this.trimBodies();
  }

  /** Forgets an entry, and counts its answer's bytes out. */
  private drop(key: string, entry: Known): void {
    this.known.delete(key);
    if (entry.body) this.bodyBytes -= entry.body.length;
  }

  /** Over JOB_STATUS_CACHE_BYTES: the answers of the oldest learned entries go (their versions stay, for 304s). */
  private trimBodies(): void {
    if (this.bodyBytes <= this.bodyMax) return;
    for (const entry of this.known.values()) {
      if (!entry.body) continue;
      this.bodyBytes -= entry.body.length;
      delete entry.body;
      if (this.bodyBytes <= this.bodyMax) return;
    }
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
      this.drop(key, entry);
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
    this.bodyBytes = 0;
  }

  get size(): number {
    return this.known.size;
  }

  /** Bytes of the whole answers kept. */
  get answerBytes(): number {
    return this.bodyBytes;
  }
}

const keyOf = (userId: string, jobId: string) => `${userId}\u0000${jobId}`;

/** Gives JobStatusCache its refresh ahead: the job's version from the jobs service, as a revalidating poll would ask it. */
@Injectable()
export class JobStatusRefresher implements OnModuleInit {
  constructor(
    private readonly rpc: RpcClient,
    private readonly cache: JobStatusCache,
  ) {}

  onModuleInit(): void {
    this.cache.refreshWith(
      async (userId, jobId, version) =>
        (await this.rpc.call('jobs.status', { userId, jobId, ifNoneMatch: [version] })).version,
    );
  }
}

/**
 * Events published while NATS was away never arrive here: on a disconnect or a reconnect, everything
 * JobStatusCache knows is forgotten. (The events themselves reach it through RealtimeGateway's one
 * subscription to `events.>`, which says `changed` or `heardWhileEmpty` for each.)
 */
@Injectable()
export class JobStatusCacheReset implements OnModuleInit {
  constructor(
    @Inject(NATS_CONNECTION) private readonly nc: NatsConnection,
    private readonly cache: JobStatusCache,
  ) {}

  onModuleInit(): void {
    void this.watch();
  }

  private async watch(): Promise<void> {
    for await (const status of this.nc.status()) {
      if (status.type === 'disconnect' || status.type === 'reconnect') this.cache.forgetAll();
    }
  }
}
