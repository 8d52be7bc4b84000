import { formatLocal, type PolicyPreset } from '@bns/contracts';

export const PRESET_LABEL: Record<PolicyPreset, string> = { standard: 'Standard', careful: 'Careful (recommended)', custom: 'Custom' };

/** "about 3 h 20 min", "about 2 days 4 h", "under a minute". */
export function durationLabel(minutes: number): string {
  if (minutes < 1) return 'under a minute';
  const days = Math.floor(minutes / 1440);
  const hours = Math.floor((minutes % 1440) / 60);
  const mins = minutes % 60;
  const parts = days > 0 ? [`${days} day${days === 1 ? '' : 's'}`, hours > 0 ? `${hours} h` : ''] : hours > 0 ? [`${hours} h`, mins > 0 ? `${mins} min` : ''] : [`${mins} min`];
  return `about ${parts.filter(Boolean).join(' ')}`;
}

/** A time as the browser's clock shows it, with the account's wall clock when that differs. */
export function whenLabel(iso: string, timeZone?: string): string {
  const at = new Date(iso);
  const local = at.toLocaleString(undefined, { weekday: 'short', day: 'numeric', month: 'short', hour: '2-digit', minute: '2-digit' });
  const browserZone = Intl.DateTimeFormat().resolvedOptions().timeZone;
  return timeZone && timeZone !== browserZone ? `${local} (${formatLocal(at, timeZone)})` : local;
}
