import { estimateMinutes } from '../common/limits.js';
import { fnv1a32 } from '../common/shard.js';
import { minutesOfDay, WARM_UP_CAPS, type SendingPolicy, type SendingWindow } from './policy.js';

/**
 * When an account may send, under its policy: time-zone arithmetic, the window and daily-cap gate,
 * estimates, and message variation. Pure functions shared by the jobs service (which enforces them)
 * and the web (which explains them), so both always agree.
 */

/** A moment as the account's clock on the wall shows it. */
export interface LocalTime {
  /** YYYY-MM-DD */
  date: string;
  /** Minutes after local midnight (0..1439). */
  minutes: number;
  /** ISO weekday, 1 = Monday … 7 = Sunday. */
  weekday: number;
}

const formats = new Map<string, Intl.DateTimeFormat>();
function formatOf(timeZone: string): Intl.DateTimeFormat {
  let f = formats.get(timeZone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
    });
    formats.set(timeZone, f);
  }
  return f;
}

interface WallClock {
  y: number;
  m: number;
  d: number;
  h: number;
  min: number;
  s: number;
}

function formatWallClock(at: Date, timeZone: string): WallClock {
  const p: Record<string, number> = {};
  for (const part of formatOf(timeZone).formatToParts(at))
    if (part.type !== 'literal') p[part.type] = Number(part.value);
  return { y: p.year!, m: p.month!, d: p.day!, h: p.hour! % 24, min: p.minute!, s: p.second! };
}

/**
 * Per time zone, the wall clock at the start of the last UTC minute asked about. `formatToParts` is
 * the costly part of every lane step's gate, and offsets change only on whole minutes, so
 * every instant of that minute reads the same wall clock, its seconds aside.
 */
const minuteStarts = new Map<string, { minute: number; clock: WallClock }>();

function wallClock(at: Date, timeZone: string): WallClock {
  const t = at.getTime();
  const minute = Math.floor(t / 60_000);
  let cached = minuteStarts.get(timeZone);
  if (cached?.minute !== minute) {
    cached = { minute, clock: formatWallClock(new Date(minute * 60_000), timeZone) };
    minuteStarts.set(timeZone, cached);
  }
  // An offset with seconds (local mean time, before about 1900) is formatted as it is.
  if (cached.clock.s !== 0) return formatWallClock(at, timeZone);
  return { ...cached.clock, s: Math.floor((t - minute * 60_000) / 1000) };
}

const pad = (n: number, w = 2) => String(n).padStart(w, '0');

/** ISO weekday of a YYYY-MM-DD date. */
export function weekdayOf(date: string): number {
  const day = new Date(`${date}T00:00:00Z`).getUTCDay();
  return day === 0 ? 7 : day;
}

export function addDays(date: string, days: number): string {
  return new Date(Date.parse(`${date}T00:00:00Z`) + days * 86_400_000).toISOString().slice(0, 10);
}

export function daysBetween(from: string, to: string): number {
  return Math.round((Date.parse(`${to}T00:00:00Z`) - Date.parse(`${from}T00:00:00Z`)) / 86_400_000);
}

export function localTime(at: Date, timeZone: string): LocalTime {
  const w = wallClock(at, timeZone);
  const date = `${pad(w.y, 4)}-${pad(w.m)}-${pad(w.d)}`;
  return { date, minutes: w.h * 60 + w.min, weekday: weekdayOf(date) };
}

/** The instant a wall clock in `timeZone` shows `date` at `minutes` after midnight (24:00 = next midnight). */
export function zonedInstant(date: string, minutes: number, timeZone: string): Date {
  const [y, m, d] = date.split('-').map(Number) as [number, number, number];
  const wanted = Date.UTC(y, m - 1, d, 0, minutes);
  const offset = (t: number) => {
    const w = wallClock(new Date(t), timeZone);
    return Date.UTC(w.y, w.m - 1, w.d, w.h, w.min, w.s) - Math.floor(t / 1000) * 1000;
  };
  let t = wanted - offset(wanted);
  t = wanted - offset(t);
  return new Date(t);
}

/** The account's counters the gate needs (kept on its lane). */
export interface SendCounters {
  /** Local date of `dayCount`. */
  dayKey: string | null;
  dayCount: number;
  /** Local date of the account's first send under warm-up. */
  warmUpFrom: string | null;
}

/** Today's cap: the policy's, lowered during warm-up; null = none. */
export function dailyCapOn(policy: SendingPolicy, date: string, warmUpFrom: string | null): number | null {
  let cap = policy.dailyCap;
  if (policy.warmUp) {
    const day = warmUpFrom ? Math.max(0, daysBetween(warmUpFrom, date)) : 0;
    const ramp = WARM_UP_CAPS[day];
    if (ramp !== undefined) cap = cap === null ? ramp : Math.min(cap, ramp);
  }
  return cap;
}

function inWindow(window: SendingWindow, local: LocalTime): boolean {
  return (
    window.days.includes(local.weekday) &&
    local.minutes >= minutesOfDay(window.start)! &&
    local.minutes < minutesOfDay(window.end)!
  );
}

/** The first instant at or after `from` inside the window (`from` itself when there is none). */
export function nextWindowOpening(policy: SendingPolicy, from: Date): Date {
  const window = policy.window;
  if (!window) return from;
  const local = localTime(from, policy.timeZone);
  if (inWindow(window, local)) return from;
  const start = minutesOfDay(window.start)!;
  for (let d = 0; d <= 7; d++) {
    const date = addDays(local.date, d);
    if (!window.days.includes(weekdayOf(date))) continue;
    const open = zonedInstant(date, start, policy.timeZone);
    if (open.getTime() > from.getTime()) return open;
  }
  return from;
}

export type Gate =
  | { open: true; cap: number | null; sentToday: number }
  | { open: false; reason: 'window' | 'daily_cap'; resumesAt: Date; cap: number | null };

/** May the account send at `at`? If not, why, and from when on it may. */
export function gateAt(policy: SendingPolicy, at: Date, counters: SendCounters): Gate {
  const local = localTime(at, policy.timeZone);
  const sentToday = counters.dayKey === local.date ? counters.dayCount : 0;
  const cap = dailyCapOn(policy, local.date, counters.warmUpFrom);
  if (cap !== null && sentToday >= cap) {
    const midnight = zonedInstant(addDays(local.date, 1), 0, policy.timeZone);
    return { open: false, reason: 'daily_cap', resumesAt: nextWindowOpening(policy, midnight), cap };
  }
  if (policy.window && !inWindow(policy.window, local))
    return { open: false, reason: 'window', resumesAt: nextWindowOpening(policy, at), cap };
  return { open: true, cap, sentToday };
}

/** The counters after one more message sent at `at`. */
export function countSend(policy: SendingPolicy, at: Date, counters: SendCounters): SendCounters {
  const day = localTime(at, policy.timeZone).date;
  return {
    dayKey: day,
    dayCount: counters.dayKey === day ? counters.dayCount + 1 : 1,
    warmUpFrom: counters.warmUpFrom ?? (policy.warmUp ? day : null),
  };
}

/** The gap after the `nth` message (1-based) of a run: the expected value of the random part. */
function expectedGapMs(policy: SendingPolicy, nth: number): number {
  const pause = policy.pauseEvery && policy.pauseMs && nth % policy.pauseEvery === 0 ? policy.pauseMs : 0;
  return policy.delayMs + policy.jitterMs / 2 + pause;
}

export interface Estimate {
  /** Minutes from the start of sending (now, or startAt) to the last message. */
  estimatedTime: number;
  estimatedFinishAt: Date;
  /** When the first message is expected (after a closed window or a reached cap). */
  firstSendAt: Date;
}

/**
 * How long `recipients` messages take under `policy`, with the expected gap (delay + jitter/2), pauses,
 * the window and the daily cap (warm-up included). Under a plain pace (standard) this is exactly the
 * spec's formula: ceil(delay × (n − 1) / 60 s).
 */
export function estimateSend(
  recipients: number,
  policy: SendingPolicy,
  options: { now?: Date; startAt?: Date; counters?: SendCounters } = {},
): Estimate {
  const begin = new Date(Math.max((options.now ?? new Date()).getTime(), options.startAt?.getTime() ?? 0));
  const plain = !policy.window && policy.dailyCap === null && !policy.warmUp && !policy.pauseEvery;
  if (recipients <= 0) return { estimatedTime: 0, estimatedFinishAt: begin, firstSendAt: begin };
  if (plain) {
    const gap = policy.delayMs + policy.jitterMs / 2;
    return {
      estimatedTime:
        policy.jitterMs === 0
          ? estimateMinutes(recipients, policy.delayMs)
          : Math.ceil((gap * (recipients - 1)) / 60_000),
      estimatedFinishAt: new Date(begin.getTime() + gap * (recipients - 1)),
      firstSendAt: begin,
    };
  }
  let counters: SendCounters = options.counters ?? { dayKey: null, dayCount: 0, warmUpFrom: null };
  let t = begin.getTime();
  let first = t;
  let last = t;
  let guard = 0;
  for (let i = 1; i <= recipients;) {
    if (++guard > 100_000) break;
    const gate = gateAt(policy, new Date(t), counters);
    if (!gate.open) {
      t = gate.resumesAt.getTime();
      continue;
    }
    // Inside the window with room under the cap: send until the window closes, the day ends or the cap is hit.
    const local = localTime(new Date(t), policy.timeZone);
    const dayEnd = zonedInstant(addDays(local.date, 1), 0, policy.timeZone).getTime();
    const windowEnd = policy.window
      ? zonedInstant(local.date, minutesOfDay(policy.window.end)!, policy.timeZone).getTime()
      : dayEnd;
    const until = Math.min(dayEnd, windowEnd);
    let room = gate.cap === null ? Infinity : gate.cap - gate.sentToday;
    while (i <= recipients && t < until && room > 0) {
      if (i === 1) first = t;
      last = t;
      counters = {
        dayKey: local.date,
        dayCount: (counters.dayKey === local.date ? counters.dayCount : 0) + 1,
        warmUpFrom: counters.warmUpFrom ?? (policy.warmUp ? local.date : null),
      };
      room--;
      if (i < recipients) t += expectedGapMs(policy, i);
      i++;
    }
  }
  return {
    estimatedTime: Math.ceil((last - begin.getTime()) / 60_000),
    estimatedFinishAt: new Date(last),
    firstSendAt: new Date(first),
  };
}

/** `{Hello|Hi|Hey}`: a choice between options; `{{name}}` placeholders have no `|` and are left alone. */
const VARIATION = /\{([^{}]*\|[^{}]*)\}/g;

/** How many different texts the message's variations give (1 when it has none). */
export function variantCount(message: string): number {
  let count = 1;
  for (const m of message.matchAll(VARIATION))
    count = Math.min(Number.MAX_SAFE_INTEGER, count * m[1]!.split('|').length);
  return count;
}

/** The message with each variation replaced by the option `choose` picks (given the options and the variation's place). */
function eachVariation(message: string, choose: (options: string[], k: number) => string): string {
  let k = 0;
  return message.replace(VARIATION, (_whole, body: string) => choose(body.split('|'), k++));
}

/** The message with one option of each variation, chosen by `seed` (job + recipient): the same seed, the same text. */
export function pickVariation(message: string, seed: string): string {
  return eachVariation(message, (options, k) => options[fnv1a32(`${seed}:${k}`) % options.length]!);
}

/** The message with option `index` of each variation (wrapping round a shorter one): 0 is the first, as previews show it. */
export function variationAt(message: string, index: number): string {
  return eachVariation(message, (options) => options[index % options.length]!);
}

/** "2026-03-11 09:00 (Asia/Hong_Kong)": a time as the account's clock shows it, for log lines. */
export function formatLocal(at: Date, timeZone: string): string {
  const local = localTime(at, timeZone);
  return `${local.date} ${pad(Math.floor(local.minutes / 60))}:${pad(local.minutes % 60)} (${timeZone})`;
}
