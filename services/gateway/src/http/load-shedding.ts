import type { NextFunction, Request, Response } from 'express';
import { CommonErrorCode, MESSAGES } from '@bns/contracts';

const SAMPLE_MS = 50;
/** Probes and scrapes: an overloaded replica is busy, not dead, and what it says about itself matters most then. */
const EXEMPT = new Set(['/healthz', '/readyz', '/metrics']);
const OVERLOADED = JSON.stringify({ success: false, error: MESSAGES.overloaded, code: CommonErrorCode.Overloaded });
const OVERLOADED_BYTES = String(Buffer.byteLength(OVERLOADED));
const TOO_MANY = JSON.stringify({ success: false, error: MESSAGES.rateLimited, code: CommonErrorCode.RateLimited });
const TOO_MANY_BYTES = String(Buffer.byteLength(TOO_MANY));

/**
 * The most of a limit one caller may hold in progress at once (at least one request): whatever one
 * caller sends, the rest stays for everyone else, so a burst is answered 429 to its sender before
 * anyone is shed with a 503.
 */
export const SHED_CALLER_SHARE = 0.25;

/**
 * Who a request is from, before it is authenticated (shedding comes first, and must stay cheap): its
 * bearer token, or its client address without one. A forged token only splits its sender's share
 * until the token is refused (401), a few milliseconds later.
 */
function callerOf(req: Request): string {
  const auth = req.headers.authorization;
  return auth !== undefined && auth.length > 7 ? auth : `ip ${req.ip ?? ''}`;
}

/** The adaptive limit judges the backends' round trips in windows this long. */
export const SHED_WINDOW_MS = 100;
/** A window with fewer round trips than this says nothing about a queue. */
export const SHED_MIN_SAMPLES = 10;
/**
 * Windows in a row that must find a queue before the limit is cut (CoDel's interval): a burst that
 * queues for a moment (a hundred writes to one row) is answered, a queue that stays is not.
 */
export const SHED_SUSTAIN_WINDOWS = 3;
/**
 * A standing queue cuts the limit to target / fastest of what was in progress (the share of the
 * queue to keep to wait about the target), within these bounds per window.
 */
const CUT_MIN = 0.5;
const CUT_MAX = 0.8;
/** Each window without one lets the limit grow back by this share (at least 1). */
const GROW = 0.05;

export interface AdaptiveLimitOptions {
  /** Its ceiling (SHED_READS_MAX_IN_FLIGHT); the limit starts there. */
  max: number;
  /** The limit never goes below this (SHED_READS_MIN_IN_FLIGHT, at most `max`). */
  floor: number;
  /** Queueing the backends may add before the limit is cut (SHED_TARGET_MS); 0: the limit stays at `max`. */
  targetMs: number;
}

/**
 * How many requests in progress a replica admits, learnt from how long the services behind it take
 * (CoDel's signal, with an additive-increase / multiplicative-decrease bound). When even the fastest
 * backend round trip of a window took longer than the target, every request is waiting in a queue
 * (jobs, NATS or Postgres busy), not on slow work of its own; when that held for SHED_SUSTAIN_WINDOWS
 * windows in a row, the limit is cut, and again each further such window, to what was in progress
 * times target / fastest (between 50% and 80% per window), so admitted requests keep answering in
 * about the target and the rest get a 503 at once. Such a window before that holds the limit as it is.
 * Any other window lets it grow back by 5% (at least 1), up to `max`. A few slow calls (a large start,
 * an export) never cut it: the fastest of the window decides, and only with SHED_MIN_SAMPLES of them
 * and more requests in progress than the floor. Round trips still unanswered past the target count as
 * slow ones, so a stalled backend (a locked table, a paused process) cuts it as well.
 */
export class AdaptiveLimit {
  private value: number;
  private readonly floor: number;
  private fastest = Infinity;
  private samples = 0;
  /** Windows in a row that found a queue. */
  private queuedWindows = 0;

  constructor(private readonly options: AdaptiveLimitOptions) {
    this.value = options.max;
    this.floor = Math.min(options.floor, options.max);
  }

  /** Requests in progress admitted now. */
  get current(): number {
    return Math.floor(this.value);
  }

  /** A backend round trip took `ms`. */
  sample(ms: number): void {
    this.samples++;
    if (ms < this.fastest) this.fastest = ms;
  }

  /**
   * A window ended with `inFlight` requests in progress, `waiting` of the backend round trips still
   * unanswered already longer than the target: cut or grow, and start the next window. Those count
   * as slow round trips, so a backend that stalls (answering nothing) cuts the limit too; one that
   * answered a round trip of the window within the target does not.
   */
  judge(inFlight: number, waiting = 0): void {
    const queued =
      this.options.targetMs > 0 &&
      this.fastest > this.options.targetMs &&
      this.samples + waiting >= SHED_MIN_SAMPLES &&
      inFlight > this.floor;
    this.queuedWindows = queued ? this.queuedWindows + 1 : 0;
    if (this.queuedWindows >= SHED_SUSTAIN_WINDOWS) {
      // No round trip came back at all: cut by as much as a window may.
      const cut = Math.min(CUT_MAX, Math.max(CUT_MIN, this.options.targetMs / this.fastest));
      this.value = Math.max(this.floor, Math.min(this.value, inFlight) * cut);
    } else if (!queued) {
      this.value = Math.min(this.options.max, this.value + Math.max(1, this.value * GROW));
    }
    this.fastest = Infinity;
    this.samples = 0;
  }
}

export interface LoadShedderOptions {
  /** SHED_MAX_IN_FLIGHT: every request. */
  maxInFlight: number;
  /** The adaptive limit reads (GET, HEAD) meet as well. */
  reads: AdaptiveLimitOptions;
  /** SHED_MAX_LAG_MS. */
  maxLagMs: number;
  /** How many backend round trips have waited longer than `ms` so far (RpcClient.waitingLongerThan). */
  waitingLongerThan?: (ms: number) => number;
}

/** Reads: a poll or a list that is refused is asked again anyway; they make way first. */
const READS = new Set(['GET', 'HEAD']);

/**
 * Load shedding, fair first, then by what a request is worth when the replica is overloaded. A caller
 * (a token, or an address before sign-in) holding SHED_CALLER_SHARE of the limit its request meets
 * gets 429 + Retry-After at once: one user's burst is refused to that user, and never fills the
 * replica so that others are shed. Past SHED_MAX_IN_FLIGHT requests in progress every new request is
 * answered 503 + Retry-After at once instead of joining a queue that would answer it seconds later (and
 * make every other caller wait too). When the event loop lags more than SHED_MAX_LAG_MS behind, a
 * caller that already has a request in progress gets 429, and other callers 503 once the reads' floor
 * of requests is in progress. Reads (GET, HEAD: polls, lists, exports) also
 * meet the adaptive limit (AdaptiveLimit, at most SHED_READS_MAX_IN_FLIGHT), so they are refused
 * first and admitted ones answer in about SHED_TARGET_MS; a write (a start, a pause, a template
 * saved) is what a user just asked for and waits its turn up to the hard bound. Health probes and
 * metric scrapes are never shed. Feed it the backends' round trips with `roundTrip`.
 */
export class LoadShedder {
  private inFlight = 0;
  /** Requests in progress per caller (callerOf); a caller with none has no entry. */
  private readonly byCaller = new Map<string, number>();
  private lagMs = 0;
  private readonly limit: AdaptiveLimit;
  private readonly timer: NodeJS.Timeout;
  private readonly maxLagMs: number;
  private readonly maxInFlight: number;
  /** While the event loop lags, callers new to this replica are still admitted up to this many in progress (the reads' floor). */
  private readonly floorUnderLag: number;
  private fromMemory?: (req: Request) => boolean;
  shed = 0;
  /** Requests refused 429 because their caller held its share. */
  overShare = 0;

  constructor(options: LoadShedderOptions) {
    this.limit = new AdaptiveLimit(options.reads);
    this.maxLagMs = options.maxLagMs;
    this.maxInFlight = options.maxInFlight;
    this.floorUnderLag = Math.min(options.reads.floor, options.maxInFlight);
    const targetMs = options.reads.targetMs;
    let expected = performance.now() + SAMPLE_MS;
    let windowStart = performance.now();
    this.timer = setInterval(() => {
      const now = performance.now();
      // The timer fires late by as much as the loop was blocked. Smoothed, so one GC pause or one
      // scheduling hiccup does not shed, while a loop that stays behind does within a few ticks.
      this.lagMs = 0.6 * this.lagMs + 0.4 * Math.max(0, now - expected);
      expected = now + SAMPLE_MS;
      if (now - windowStart >= SHED_WINDOW_MS) {
        this.limit.judge(this.inFlight, targetMs > 0 ? (options.waitingLongerThan?.(targetMs) ?? 0) : 0);
        windowStart = now;
      }
    }, SAMPLE_MS);
    this.timer.unref();
  }

  /** Requests in progress past which a new read is refused: the adaptive limit, within the hard bound. */
  private get readLimit(): number {
    return Math.min(this.limit.current, this.maxInFlight);
  }

  get current(): { inFlight: number; lagMs: number; readLimit: number } {
    return { inFlight: this.inFlight, lagMs: this.lagMs, readLimit: this.readLimit };
  }

  /** A request to a service behind the gateway took `ms` (RpcClient.observeRoundTrips). */
  readonly roundTrip = (ms: number): void => this.limit.sample(ms);

  /**
   * Reads that `answered` says this replica answers from its own memory need no service behind it, so
   * the backends' queues are none of their business: they meet the hard bound (and the lag rule) only.
   */
  answersFromMemory(answered: (req: Request) => boolean): void {
    this.fromMemory = answered;
  }

  readonly middleware = (req: Request, res: Response, next: NextFunction): void => {
    if (EXEMPT.has(req.path)) return next();
    const bound = READS.has(req.method) && !this.fromMemory?.(req) ? this.readLimit : this.maxInFlight;
    const caller = callerOf(req);
    const held = this.byCaller.get(caller) ?? 0;
    // A lagging event loop is everyone's: the callers that already have a request in progress make
    // way first (429), so one caller's flood cannot get the others shed.
    const lagging = this.lagMs > this.maxLagMs;
    if (held >= (lagging ? 1 : Math.max(1, Math.floor(bound * SHED_CALLER_SHARE)))) {
      this.overShare++;
      return refuse(res, 429, TOO_MANY, TOO_MANY_BYTES);
    }
    if (this.inFlight >= bound || (lagging && this.inFlight >= this.floorUnderLag)) {
      this.shed++;
      return refuse(res, 503, OVERLOADED, OVERLOADED_BYTES);
    }
    this.inFlight++;
    this.byCaller.set(caller, held + 1);
    // 'close' comes once per response, after it was sent or when the client went away first.
    res.once('close', () => this.finish(caller));
    next();
  };

  private finish(caller: string): void {
    this.inFlight--;
    const held = (this.byCaller.get(caller) ?? 1) - 1;
    if (held > 0) this.byCaller.set(caller, held);
    else this.byCaller.delete(caller);
  }

  /** Callers with a request in progress (memory is bounded by the requests in progress). */
  get callers(): number {
    return this.byCaller.size;
  }

  stop(): void {
    clearInterval(this.timer);
  }
}

/**
 * Written as it is (no Express send: no body hashing, no header parsing): an overloaded replica should
 * spend the least on a refusal. A body the caller sent is not read, so the connection is closed after
 * the answer rather than left holding unread bytes.
 */
function refuse(res: Response, status: 429 | 503, body: string, bytes: string): void {
  res.statusCode = status;
  res.setHeader('Retry-After', '1');
  res.setHeader('Cache-Control', 'no-store');
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Content-Length', bytes);
  res.end(body);
}
