/** The retention clean-up's clock: tests give their own to move time on. */
export const MEDIA_CLOCK = Symbol('MEDIA_CLOCK');
export interface MediaClock {
  now(): Date;
}
export const systemClock: MediaClock = { now: () => new Date() };
