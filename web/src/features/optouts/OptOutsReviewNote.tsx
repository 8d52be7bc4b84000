import { useMemo } from 'react';
import { normalizeHkPhone, OPT_OUT_LIMITS, OPT_OUT_MESSAGES } from '@bns/contracts';
import { useAppSelector } from '../../app/hooks.js';
import { selectUserId } from '../auth/slice.js';
import { useCheckOptOutsQuery } from './optOutsApi.js';

/**
 * The numbers a job would send to, and how many it would skip (opted out, not on WhatsApp), asked of the
 * server before the start: again whenever a step using it shows (an opt-out may have come in meanwhile)
 * and when the numbers change. Until it answers, or for a list too long to check, every number counts.
 */
export function useSkippedRecipients(numbers: readonly string[]) {
  const userId = useAppSelector(selectUserId);
  const skip = numbers.length === 0 || numbers.length > OPT_OUT_LIMITS.checkMax;
  const { data } = useCheckOptOutsQuery({ userId, phoneNumbers: numbers }, { skip, refetchOnMountOrArgChange: true });
  return useMemo(() => {
    const local = (n: string) => normalizeHkPhone(n) ?? n;
    const optedOut = new Set((skip ? [] : (data?.optedOut ?? [])).map(local));
    const notOnWhatsApp = new Set((skip ? [] : (data?.notOnWhatsApp ?? [])).map(local));
    // Nothing to take out (the usual case, and any list too long to check): no pass over every number.
    if (optedOut.size === 0 && notOnWhatsApp.size === 0) return { sendable: numbers, optedOut: 0, notOnWhatsApp: 0 };
    const sendable = numbers.filter((n) => !optedOut.has(local(n)) && !notOnWhatsApp.has(local(n)));
    const counted = (set: Set<string>) => numbers.filter((n) => set.has(local(n))).length;
    return { sendable, optedOut: counted(optedOut), notOnWhatsApp: counted(notOnWhatsApp) };
  }, [numbers, data, skip]);
}

/** The review step's note: how many recipients the job will skip. */
export function OptOutsReviewNote({ numbers }: { numbers: readonly string[] }) {
  const { optedOut, notOnWhatsApp } = useSkippedRecipients(numbers);
  if (optedOut === 0 && notOnWhatsApp === 0) return null;
  return (
    <div className="notice notice-warning" role="status">
      {optedOut > 0 && <p>{OPT_OUT_MESSAGES.willBeSkipped(optedOut)}</p>}
      {notOnWhatsApp > 0 && <p>{OPT_OUT_MESSAGES.notOnWhatsAppSkipped(notOnWhatsApp)}</p>}
    </div>
  );
}
