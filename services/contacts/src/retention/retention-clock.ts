/** The retention purge's clock: tests give their own to move time on. */
export const RETENTION_CLOCK = Symbol('RETENTION_CLOCK');
export interface RetentionClock {
  now(): Date;
}
export const systemClock: RetentionClock = { now: () => new Date() };
