import type { PolicyPreset } from '@bns/contracts';

export const PRESET_LABEL: Record<PolicyPreset, string> = {
  standard: 'Standard',
  careful: 'Careful (recommended)',
  custom: 'Custom',
};

/** "about 3 h 20 min", "about 2 days 4 h", "under a minute". */
export function durationLabel(minutes: number): string {
  if (minutes < 1) return 'under a minute';
  const days = Math.floor(minutes / 1440);
  const hours = Math.floor((minutes % 1440) / 60);
  const mins = minutes % 60;
  const parts =
    days > 0
      ? [`${days} day${days === 1 ? '' : 's'}`, hours > 0 ? `${hours} h` : '']
      : hours > 0
        ? [`${hours} h`, mins > 0 ? `${mins} min` : '']
        : [`${mins} min`];
  return `about ${parts.filter(Boolean).join(' ')}`;
}

const WHEN: Intl.DateTimeFormatOptions = {
  weekday: 'short',
  day: 'numeric',
  month: 'short',
  hour: '2-digit',
  minute: '2-digit',
};
const TIME: Intl.DateTimeFormatOptions = { hour: '2-digit', minute: '2-digit' };

/** "Hong Kong" of "Asia/Hong_Kong": how people name a zone's clock. */
function zoneName(timeZone: string): string {
  return (timeZone.split('/').pop() ?? timeZone).replace(/_/g, ' ');
}

/**
 * A time as the browser's clock shows it, with the account's clock when that differs, in one pair of
 * brackets so it reads inside a sentence: "Wed 25 Nov, 10:30 (17:30 Hong Kong time)", the account's day
 * only when it is another one.
 */
export function whenLabel(iso: string, timeZone?: string): string {
  const at = new Date(iso);
  const local = at.toLocaleString(undefined, WHEN);
  const browserZone = Intl.DateTimeFormat().resolvedOptions().timeZone;
  if (!timeZone || timeZone === browserZone) return local;
  try {
    const day = (zone?: string) => at.toLocaleDateString('en-CA', { timeZone: zone });
    const there = at.toLocaleString(undefined, day(timeZone) === day() ? { ...TIME, timeZone } : { ...WHEN, timeZone });
    return `${local} (${there} ${zoneName(timeZone)} time)`;
  } catch {
    // A zone this browser does not know: its own clock alone.
    return local;
  }
}
