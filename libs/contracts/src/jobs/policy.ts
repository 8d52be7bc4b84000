import { LIMITS } from '../common/limits.js';

/**
 * The sending policy of one account (= one linked number): how the jobs service paces its messages.
 * Owned and enforced by the jobs service; the web shows and edits it through the gateway.
 */
export const POLICY_PRESETS = ['standard', 'careful', 'custom'] as const;
export type PolicyPreset = (typeof POLICY_PRESETS)[number];

/** `{start: "09:00", end: "20:00", days: [1..7]}` in the policy's time zone; days are ISO weekdays (1 = Monday). */
export interface SendingWindow {
  start: string;
  end: string;
  days: number[];
}

export interface SendingPolicy {
  preset: PolicyPreset;
  /** Base gap between two messages of this account, ms. */
  delayMs: number;
  /** Random extra 0..jitterMs added to each gap, ms. */
  jitterMs: number;
  /** After every `pauseEvery` messages a pause of `pauseMs`; null = never. */
  pauseEvery: number | null;
  pauseMs: number | null;
  /** Most messages per calendar day (in `timeZone`); null = no cap. */
  dailyCap: number | null;
  /** When messages may go out; null = any time. */
  window: SendingWindow | null;
  /** IANA time zone name of the window and the daily cap's day. */
  timeZone: string;
  /** A newly used number ramps its daily cap up over its first days (WARM_UP_CAPS). */
  warmUp: boolean;
  /**
   * Most messages in the last 30 days (`POLICY_LIMITS.unansweredWindowDays`) to numbers that never
   * replied; at it, campaigns wait (`unanswered`) until older ones leave the window or numbers reply.
   * null = no limit (the default).
   */
  unansweredLimit: number | null;
}

/** The editable fields, in the order the web shows them. */
export const POLICY_FIELDS = [
  'delayMs',
  'jitterMs',
  'pauseEvery',
  'pauseMs',
  'dailyCap',
  'window',
  'timeZone',
  'warmUp',
  'unansweredLimit',
] as const;
export type PolicyField = (typeof POLICY_FIELDS)[number];
export type PolicyUpdate = Partial<Omit<SendingPolicy, 'preset'>> & { preset?: PolicyPreset };

export const POLICY_LIMITS = {
  /** The floor of a gap: below it WhatsApp sees a bot (the jobs service may lower it for tests only). */
  minDelayMs: 1000,
  maxDelayMs: 3_600_000,
  maxJitterMs: 3_600_000,
  maxPauseEvery: 10_000,
  minPauseMs: 1000,
  maxPauseMs: 86_400_000,
  maxDailyCap: 100_000,
  maxUnansweredLimit: 100_000,
  /** The rolling window the unanswered limit counts in (days, today included). */
  unansweredWindowDays: 30,
  /** The careful preset's unanswered limit: WhatsApp trialled a monthly cap on unanswered messages. */
  carefulUnansweredLimit: 200,
  /** `startAt` may be at most this far ahead. */
  maxStartAheadMs: 30 * 86_400_000,
  /**
   * Refusals in a row (accepted, then refused by WhatsApp) to numbers the account never talked to
   * that pause the account's campaigns (`refused`): WhatsApp's reach-out limit on new contacts.
   */
  refusalsToNewContactsPause: 2,
  /** Jobs over this many recipients under `standard` get a warning in the review step. */
  standardWarnRecipients: 300,
  defaultTimeZone: 'Asia/Hong_Kong',
} as const;

/** Daily caps of a warming-up number on its 1st, 2nd, … day of sending; from then on, the policy's own cap. */
export const WARM_UP_CAPS = [50, 100, 200, 400] as const;

/** Back-off pauses after WhatsApp pushes back (rate-overlimit), growing with each hit within a day. */
export const DEFAULT_BACKOFF_MS = [300_000, 900_000, 3_600_000] as const;

/** The spec's pace: 4 s between messages, nothing else (SPEC §9). */
export function standardPolicy(
  delayMs: number = LIMITS.defaultSendDelayMs,
  jitterMs = 0,
  timeZone: string = POLICY_LIMITS.defaultTimeZone,
): SendingPolicy {
  return {
    preset: 'standard',
    delayMs,
    jitterMs,
    pauseEvery: null,
    pauseMs: null,
    dailyCap: null,
    window: null,
    timeZone,
    warmUp: false,
    unansweredLimit: null,
  };
}

/**
 * The recommended preset, from what campaign tools and WhatsApp-Web communities advise: random 5–15 s
 * gaps, a 3-minute pause every 25 messages, at most 300 a day, office hours every day, warm-up on.
 */
export function carefulPolicy(timeZone: string = POLICY_LIMITS.defaultTimeZone): SendingPolicy {
  return {
    preset: 'careful',
    delayMs: 5000,
    jitterMs: 10_000,
    pauseEvery: 25,
    pauseMs: 180_000,
    dailyCap: 300,
    window: { start: '09:00', end: '20:00', days: [1, 2, 3, 4, 5, 6, 7] },
    timeZone,
    warmUp: true,
    unansweredLimit: POLICY_LIMITS.carefulUnansweredLimit,
  };
}

/** One line per field and preset, for the "Sending pace" card. */
export const POLICY_EXPLANATIONS = {
  standard: 'The original pace: one message every 4 seconds, no pauses, caps or hours. Fine for small sends.',
  careful:
    'Recommended. Random 5–15 s gaps, a 3-minute break every 25 messages, at most 300 a day between 09:00 and 20:00, a slow start for a new number, and a wait after 200 messages in 30 days to numbers that never replied. Looks like a person, not a bot, which is what keeps numbers from being banned.',
  custom: 'Your own values.',
  delayMs: 'Shortest gap between two messages.',
  jitterMs: 'A random extra wait, up to this long, added to each gap so the rhythm is not regular.',
  pauseEvery: 'After this many messages, take a longer break.',
  pauseMs: 'How long that break lasts.',
  dailyCap: 'Most messages this number sends in one day; the rest wait for the next day.',
  window: 'Hours and days when messages may go out; outside them sending waits.',
  timeZone: 'The time zone of the sending hours and of the daily cap’s day.',
  warmUp: `A number that is new to bulk sending starts slowly: at most ${WARM_UP_CAPS.join(', ')} messages on its first days.`,
  unansweredLimit:
    'Most messages in the last 30 days to numbers that never replied; at it, sending waits. WhatsApp limits messages nobody answers.',
} as const;

const seconds = (ms: number) => `${ms / 1000} s`;

/** Refusals of a policy update or a start time, each naming its field. */
export const POLICY_MESSAGES = {
  notAnObject: 'The sending policy must be an object',
  unknownField: (key: string) => `Unknown sending policy setting: ${key}`,
  preset: `preset must be one of ${POLICY_PRESETS.join(', ')}`,
  delayMs: (floor: number) =>
    `delayMs must be a whole number of milliseconds from ${floor} (${seconds(floor)}) to ${POLICY_LIMITS.maxDelayMs}`,
  jitterMs: `jitterMs must be a whole number of milliseconds from 0 to ${POLICY_LIMITS.maxJitterMs}`,
  pauseEvery: `pauseEvery must be a whole number from 1 to ${POLICY_LIMITS.maxPauseEvery}, or null for no pauses`,
  pauseMs: `pauseMs must be a whole number of milliseconds from ${POLICY_LIMITS.minPauseMs} to ${POLICY_LIMITS.maxPauseMs}`,
  pauseIncomplete: 'pauseEvery and pauseMs go together: set both, or set pauseEvery to null',
  dailyCap: `dailyCap must be a whole number from 1 to ${POLICY_LIMITS.maxDailyCap}, or null for no cap`,
  window: 'window must be {start: "HH:MM", end: "HH:MM", days: [1..7]} or null',
  windowTime: (field: 'start' | 'end') => `window.${field} must be a time of day as HH:MM (00:00 to 24:00)`,
  windowOrder: 'window.end must be after window.start',
  windowDays: 'window.days must list weekdays from 1 (Monday) to 7 (Sunday), at least one',
  timeZone: (value: string) => `timeZone "${value.slice(0, 64)}" is not a known IANA time zone (e.g. Asia/Hong_Kong)`,
  warmUp: 'warmUp must be true or false',
  unansweredLimit: `unansweredLimit must be a whole number from 1 to ${POLICY_LIMITS.maxUnansweredLimit}, or null for no limit`,
  startAtInvalid: 'startAt must be a date and time in ISO 8601 (e.g. 2026-01-31T09:00:00+08:00)',
  startAtPast: 'startAt must be in the future',
  startAtTooFar: `startAt must be at most ${POLICY_LIMITS.maxStartAheadMs / 86_400_000} days ahead`,
  // Pause and resume
  alreadyPaused: 'This job is already paused',
  notPausable: 'Only a queued, scheduled or running job can be paused',
  notPaused: 'This job is not paused',
  resumesByItself: 'This job was paused by its sending policy and resumes by itself',
  // The review step and the Sending pace card
  standardLargeWarning: 'Large sends at a fixed pace risk a ban; Careful pacing spreads them out',
  saved: 'Sending pace saved',
  loading: 'Loading the sending pace…',
  loadFailed: 'Could not load the sending pace',
} as const;

/** Error codes of the policy, start time and pause/resume (the `code` of an error answer). */
export enum PolicyErrorCode {
  InvalidPolicy = 'JOB_POLICY_INVALID',
  InvalidStartAt = 'JOB_START_AT_INVALID',
  /** Pause of a finished job, or of one the user already paused (409). */
  NotPausable = 'JOB_NOT_PAUSABLE',
  /** Resume of a job the user did not pause (409). */
  NotPaused = 'JOB_NOT_PAUSED',
}

/** The reasons a job waits with status `paused` (or `running`, for `unlinked`). */
export const PAUSED_REASONS = [
  'user',
  'window',
  'daily_cap',
  'unlinked',
  'rate_limited',
  'refused',
  'unanswered',
] as const;
export type PausedReason = (typeof PAUSED_REASONS)[number];

/**
 * Paused reasons that only the user ends (Resume): `user`, and `refused` (WhatsApp refused messages to
 * new contacts: going on blindly risks the number). The others end by themselves.
 */
export const USER_RESUMED_REASONS = ['user', 'refused'] as const satisfies readonly PausedReason[];
export function resumedByUser(reason: PausedReason | null | undefined): boolean {
  return reason != null && (USER_RESUMED_REASONS as readonly string[]).includes(reason);
}

/** Job log lines of pacing, in plain words. */
export const PACING_LOG = {
  scheduled: (at: string) => `Job scheduled: sending starts at ${at}`,
  pausedByUser: 'Job paused by you',
  resumedByUser: 'Job resumed by you',
  windowClosed: (at: string) => `Outside your sending hours; sending resumes at ${at}`,
  dailyCapReached: (cap: number, at: string) => `Daily limit of ${cap} messages reached; sending resumes at ${at}`,
  rateLimited: (minutes: number, at: string) =>
    `WhatsApp is limiting how fast this number may send; pausing ${minutes} minute${minutes === 1 ? '' : 's'} to protect it (resumes at ${at})`,
  resumed: 'Sending resumed',
  unansweredLimitReached: (count: number, limit: number, at: string) =>
    `Too many messages nobody answered: ${count} in the last 30 days went to numbers that never replied (your limit is ${limit}). Sending waits to protect the number; next check at ${at}`,
  refusingNewContacts: (refusals: number) =>
    `WhatsApp is refusing messages to new contacts (${refusals} refused in a row); campaign paused to protect the number. Resume when you are ready`,
} as const;

/** Human label of a paused reason (the progress view). */
export const PAUSED_REASON_TEXT: Record<PausedReason, string> = {
  user: 'Paused by you',
  window: 'Waiting for your sending hours',
  daily_cap: 'Daily limit reached',
  unlinked: 'WhatsApp is not connected',
  rate_limited: 'WhatsApp asked us to slow down',
  refused: 'WhatsApp is refusing messages to new contacts',
  unanswered: 'Too many messages nobody answered',
};

export type PolicyCheck = { ok: true; policy: SendingPolicy } | { ok: false; field: string; message: string };

const TIME = /^([01]\d|2[0-4]):([0-5]\d)$/;

/** "HH:MM" → minutes after midnight (24:00 = 1440); undefined when not a time. */
export function minutesOfDay(value: unknown): number | undefined {
  if (typeof value !== 'string') return undefined;
  const m = TIME.exec(value);
  if (!m) return undefined;
  const total = Number(m[1]) * 60 + Number(m[2]);
  return total > 1440 ? undefined : total;
}

export function isTimeZone(value: unknown): value is string {
  if (typeof value !== 'string' || value.trim() === '' || value.length > 64) return false;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: value });
    return true;
  } catch {
    return false;
  }
}

const isWhole = (v: unknown, min: number, max: number): v is number =>
  typeof v === 'number' && Number.isInteger(v) && v >= min && v <= max;

function sameSettings(a: SendingPolicy, b: SendingPolicy): boolean {
  return (
    a.delayMs === b.delayMs &&
    a.jitterMs === b.jitterMs &&
    a.pauseEvery === b.pauseEvery &&
    a.pauseMs === b.pauseMs &&
    a.dailyCap === b.dailyCap &&
    a.warmUp === b.warmUp &&
    a.unansweredLimit === b.unansweredLimit &&
    JSON.stringify(a.window) === JSON.stringify(b.window)
  );
}

/**
 * Applies a partial update to the current policy. `preset: 'standard' | 'careful'` alone switches to
 * that preset (keeping the time zone); any other setting makes the result `custom` unless it equals a
 * preset. `standard` is `standardBase` (the server's configured spec pace). Every refusal names its field.
 */
export function applyPolicyUpdate(
  current: SendingPolicy,
  update: unknown,
  options: { minDelayMs?: number; standardBase?: SendingPolicy } = {},
): PolicyCheck {
  const floor = options.minDelayMs ?? POLICY_LIMITS.minDelayMs;
  const refuse = (field: string, message: string): PolicyCheck => ({ ok: false, field, message });
  if (typeof update !== 'object' || update === null || Array.isArray(update))
    return refuse('policy', POLICY_MESSAGES.notAnObject);
  const input = update as Record<string, unknown>;
  for (const key of Object.keys(input)) {
    if (key !== 'preset' && !(POLICY_FIELDS as readonly string[]).includes(key))
      return refuse(key, POLICY_MESSAGES.unknownField(key));
  }
  if (input.timeZone !== undefined && !isTimeZone(input.timeZone))
    return refuse('timeZone', POLICY_MESSAGES.timeZone(String(input.timeZone)));
  const timeZone = (input.timeZone as string | undefined) ?? current.timeZone;
  const standard = { ...(options.standardBase ?? standardPolicy()), timeZone };

  let next: SendingPolicy = { ...current, timeZone };
  if (input.preset !== undefined) {
    if (!(POLICY_PRESETS as readonly unknown[]).includes(input.preset)) return refuse('preset', POLICY_MESSAGES.preset);
    if (input.preset === 'standard') next = standard;
    if (input.preset === 'careful') next = carefulPolicy(timeZone);
  }
  if (input.delayMs !== undefined) {
    if (!isWhole(input.delayMs, floor, POLICY_LIMITS.maxDelayMs))
      return refuse('delayMs', POLICY_MESSAGES.delayMs(floor));
    next.delayMs = input.delayMs;
  }
  if (input.jitterMs !== undefined) {
    if (!isWhole(input.jitterMs, 0, POLICY_LIMITS.maxJitterMs)) return refuse('jitterMs', POLICY_MESSAGES.jitterMs);
    next.jitterMs = input.jitterMs;
  }
  if (input.pauseEvery !== undefined) {
    if (input.pauseEvery !== null && !isWhole(input.pauseEvery, 1, POLICY_LIMITS.maxPauseEvery))
      return refuse('pauseEvery', POLICY_MESSAGES.pauseEvery);
    next.pauseEvery = input.pauseEvery;
    if (input.pauseEvery === null) next.pauseMs = null;
  }
  if (input.pauseMs !== undefined) {
    if (input.pauseMs !== null && !isWhole(input.pauseMs, POLICY_LIMITS.minPauseMs, POLICY_LIMITS.maxPauseMs))
      return refuse('pauseMs', POLICY_MESSAGES.pauseMs);
    next.pauseMs = input.pauseMs;
  }
  if ((next.pauseEvery === null) !== (next.pauseMs === null))
    return refuse(next.pauseEvery === null ? 'pauseEvery' : 'pauseMs', POLICY_MESSAGES.pauseIncomplete);
  if (input.dailyCap !== undefined) {
    if (input.dailyCap !== null && !isWhole(input.dailyCap, 1, POLICY_LIMITS.maxDailyCap))
      return refuse('dailyCap', POLICY_MESSAGES.dailyCap);
    next.dailyCap = input.dailyCap;
  }
  if (input.window !== undefined) {
    const window = checkWindow(input.window);
    if (!window.ok) return refuse(window.field, window.message);
    next.window = window.window;
  }
  if (input.warmUp !== undefined) {
    if (typeof input.warmUp !== 'boolean') return refuse('warmUp', POLICY_MESSAGES.warmUp);
    next.warmUp = input.warmUp;
  }
  if (input.unansweredLimit !== undefined) {
    if (input.unansweredLimit !== null && !isWhole(input.unansweredLimit, 1, POLICY_LIMITS.maxUnansweredLimit))
      return refuse('unansweredLimit', POLICY_MESSAGES.unansweredLimit);
    next.unansweredLimit = input.unansweredLimit;
  }
  const edited = Object.keys(input).some((k) => k !== 'preset' && k !== 'timeZone');
  if (edited || input.preset === 'custom') {
    next.preset = sameSettings(next, standard)
      ? 'standard'
      : sameSettings(next, carefulPolicy(timeZone))
        ? 'careful'
        : 'custom';
  }
  return { ok: true, policy: next };
}

function checkWindow(
  value: unknown,
): { ok: true; window: SendingWindow | null } | { ok: false; field: string; message: string } {
  if (value === null) return { ok: true, window: null };
  if (typeof value !== 'object' || Array.isArray(value))
    return { ok: false, field: 'window', message: POLICY_MESSAGES.window };
  const w = value as Record<string, unknown>;
  for (const key of Object.keys(w)) {
    if (!['start', 'end', 'days'].includes(key))
      return { ok: false, field: `window.${key}`, message: POLICY_MESSAGES.unknownField(`window.${key}`) };
  }
  const start = minutesOfDay(w.start);
  if (start === undefined || start >= 1440)
    return { ok: false, field: 'window.start', message: POLICY_MESSAGES.windowTime('start') };
  const end = minutesOfDay(w.end);
  if (end === undefined) return { ok: false, field: 'window.end', message: POLICY_MESSAGES.windowTime('end') };
  if (end <= start) return { ok: false, field: 'window.end', message: POLICY_MESSAGES.windowOrder };
  const days = w.days === undefined ? [1, 2, 3, 4, 5, 6, 7] : w.days;
  if (!Array.isArray(days) || days.length === 0 || days.some((d) => !isWhole(d, 1, 7))) {
    return { ok: false, field: 'window.days', message: POLICY_MESSAGES.windowDays };
  }
  return {
    ok: true,
    window: { start: w.start as string, end: w.end as string, days: [...new Set(days as number[])].sort() },
  };
}

/** `startAt` of a start request: absent (undefined), a time within 30 days ahead, or a refusal. */
export function checkStartAt(
  value: unknown,
  now: Date = new Date(),
): { ok: true; startAt: Date | undefined } | { ok: false; message: string } {
  if (value === undefined || value === null || value === '') return { ok: true, startAt: undefined };
  if (typeof value !== 'string' || !/^\d{4}-\d{2}-\d{2}T/.test(value))
    return { ok: false, message: POLICY_MESSAGES.startAtInvalid };
  const at = new Date(value);
  if (Number.isNaN(at.getTime())) return { ok: false, message: POLICY_MESSAGES.startAtInvalid };
  if (at.getTime() <= now.getTime()) return { ok: false, message: POLICY_MESSAGES.startAtPast };
  if (at.getTime() - now.getTime() > POLICY_LIMITS.maxStartAheadMs)
    return { ok: false, message: POLICY_MESSAGES.startAtTooFar };
  return { ok: true, startAt: at };
}

/** Messages to numbers that never replied, counted by day (`YYYY-MM-DD` in the policy's time zone). */
export type UnansweredDays = Record<string, number>;

/**
 * The account's unanswered messages: this calendar month (of `today`) and the rolling
 * `POLICY_LIMITS.unansweredWindowDays` days up to `today`, from its counts by day.
 */
export function unansweredCounts(
  days: UnansweredDays | null | undefined,
  today: string,
): { month: number; last30Days: number } {
  const from = new Date(Date.parse(`${today}T00:00:00Z`) - (POLICY_LIMITS.unansweredWindowDays - 1) * 86_400_000)
    .toISOString()
    .slice(0, 10);
  let month = 0;
  let last30Days = 0;
  for (const [day, n] of Object.entries(days ?? {})) {
    if (typeof n !== 'number' || n <= 0 || day > today) continue;
    if (day.slice(0, 7) === today.slice(0, 7)) month += n;
    if (day >= from) last30Days += n;
  }
  return { month, last30Days };
}
