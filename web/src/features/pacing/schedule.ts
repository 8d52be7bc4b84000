import { POLICY_LIMITS, POLICY_MESSAGES } from '@bns/contracts';

const MAX_DAYS = POLICY_LIMITS.maxStartAheadMs / 86_400_000;

/** The web's own words for "Send later": the server's (`startAt must …`) name a field, not a choice. */
export const SCHEDULE_TEXT = {
  choose: 'Choose the date and time to start sending',
  invalid: 'Choose a valid date and time',
  past: 'Choose a time in the future',
  tooFar: `Choose a time within ${MAX_DAYS} days`,
} as const;

export type ScheduleCheck = { ok: true; startAt: string } | { ok: false; empty: boolean; message: string };

/** "2026-03-10T09:30" of an <input type="datetime-local"> for an instant, in the browser's zone. */
export function inputValueOf(at: Date | string): string {
  const d = new Date(at);
  return new Date(d.getTime() - d.getTimezoneOffset() * 60_000).toISOString().slice(0, 16);
}

/**
 * A start time as typed (datetime-local, or ISO), checked as the jobs service will: in the future and at
 * most 30 days ahead (POLICY_LIMITS.maxStartAheadMs), so the user hears it before pressing Start.
 */
export function checkSchedule(value: string | null, now: Date = new Date()): ScheduleCheck {
  if (!value || value.trim() === '') return { ok: false, empty: true, message: SCHEDULE_TEXT.choose };
  const at = new Date(value);
  if (Number.isNaN(at.getTime())) return { ok: false, empty: false, message: SCHEDULE_TEXT.invalid };
  if (at.getTime() <= now.getTime()) return { ok: false, empty: false, message: SCHEDULE_TEXT.past };
  if (at.getTime() - now.getTime() > POLICY_LIMITS.maxStartAheadMs)
    return { ok: false, empty: false, message: SCHEDULE_TEXT.tooFar };
  return { ok: true, startAt: at.toISOString() };
}

/** The server's refusal of a start time in the web's words (a clock that differs, a time that passed). */
export function scheduleRefusalText(message: string): string | undefined {
  if (message === POLICY_MESSAGES.startAtPast) return SCHEDULE_TEXT.past;
  if (message === POLICY_MESSAGES.startAtTooFar) return SCHEDULE_TEXT.tooFar;
  if (message === POLICY_MESSAGES.startAtInvalid) return SCHEDULE_TEXT.invalid;
  return undefined;
}
