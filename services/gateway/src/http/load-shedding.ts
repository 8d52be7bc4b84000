import type { NextFunction, Request, Response } from 'express';
import { CommonErrorCode, MESSAGES } from '@bns/contracts';

const SAMPLE_MS = 50;
const EXEMPT = new Set(['/healthz', '/readyz']);
const OVERLOADED = JSON.stringify({ success: false, error: MESSAGES.overloaded, code: CommonErrorCode.Overloaded });
const OVERLOADED_BYTES = String(Buffer.byteLength(OVERLOADED));

/**
 * Load shedding: past SHED_MAX_IN_FLIGHT requests in progress, or when the event loop lags more than
 * SHED_MAX_LAG_MS behind, a new request is answered 503 + Retry-After at once instead of joining a
 * queue that would answer it seconds later (and make every other caller wait too). Health probes are
 * never shed: an overloaded replica is busy, not dead.
 */
export class LoadShedder {
  private inFlight = 0;
  private lagMs = 0;
  private readonly timer: NodeJS.Timeout;
  shed = 0;

  constructor(
    private readonly maxInFlight: number,
    private readonly maxLagMs: number,
  ) {
    let expected = performance.now() + SAMPLE_MS;
    this.timer = setInterval(() => {
      const now = performance.now();
      // The timer fires late by as much as the loop was blocked. Smoothed, so one GC pause or one
      // scheduling hiccup does not shed, while a loop that stays behind does within a few ticks.
      this.lagMs = 0.6 * this.lagMs + 0.4 * Math.max(0, now - expected);
      expected = now + SAMPLE_MS;
    }, SAMPLE_MS);
    this.timer.unref();
  }

  get current(): { inFlight: number; lagMs: number } {
    return { inFlight: this.inFlight, lagMs: this.lagMs };
  }

  readonly middleware = (req: Request, res: Response, next: NextFunction): void => {
    if (EXEMPT.has(req.path)) return next();
    if (this.inFlight >= this.maxInFlight || this.lagMs > this.maxLagMs) {
      this.shed++;
      // Written as it is (no Express send: no body hashing, no header parsing) — an overloaded
      // replica should spend the least on a refusal.
      res.statusCode = 503;
      res.setHeader('Retry-After', '1');
      res.setHeader('Cache-Control', 'no-store');
      res.setHeader('Content-Type', 'application/json; charset=utf-8');
      res.setHeader('Content-Length', OVERLOADED_BYTES);
      res.end(OVERLOADED);
      return;
    }
    this.inFlight++;
    // 'close' comes once per response, after it was sent or when the client went away first.
    res.once('close', this.finish);
    next();
  };

  private readonly finish = (): void => {
    this.inFlight--;
  };

  stop(): void {
    clearInterval(this.timer);
  }
}
