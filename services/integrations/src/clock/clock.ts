/**
 * The time every timer of this service reads (retry schedule, the secret overlap after a rotation,
 * disabling an endpoint that failed for days, idempotency expiry): injected, so tests move it forward
 * instead of waiting. SQL takes these times as parameters rather than calling now().
 */
export const CLOCK = Symbol('CLOCK');

export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };

/** A clock tests set and move. */
export class ManualClock implements Clock {
  constructor(private at: Date = new Date()) {}
  now(): Date {
    return new Date(this.at.getTime());
  }
  advance(ms: number): void {
    this.at = new Date(this.at.getTime() + ms);
  }
  set(at: Date): void {
    this.at = at;
  }
}
