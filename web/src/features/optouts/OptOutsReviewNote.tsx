import { OPT_OUT_LIMITS, OPT_OUT_MESSAGES } from '@bns/contracts';
import { useAppSelector } from '../../app/hooks.js';
import { selectUserId } from '../auth/slice.js';
import { useCheckOptOutsQuery } from './optOutsApi.js';

/** The review step's note: how many recipients the job will skip, asked of the server before the start. */
export function OptOutsReviewNote({ numbers }: { numbers: readonly string[] }) {
  const userId = useAppSelector(selectUserId);
  const skip = numbers.length === 0 || numbers.length > OPT_OUT_LIMITS.checkMax;
  // Asked again whenever Step 2 shows (an opt-out may have come in meanwhile) and when the numbers change.
  const { data } = useCheckOptOutsQuery({ userId, phoneNumbers: numbers }, { skip, refetchOnMountOrArgChange: true });
  if (skip || !data || (data.optedOut.length === 0 && data.notOnWhatsApp.length === 0)) return null;
  return (
    <div className="notice notice-warning" role="status">
      {data.optedOut.length > 0 && <p>{OPT_OUT_MESSAGES.willBeSkipped(data.optedOut.length)}</p>}
      {data.notOnWhatsApp.length > 0 && <p>{OPT_OUT_MESSAGES.notOnWhatsAppSkipped(data.notOnWhatsApp.length)}</p>}
    </div>
  );
}
