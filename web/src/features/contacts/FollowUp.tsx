import { useState } from 'react';
import { FOLLOW_UPS, type FollowUpKind, type JobHistoryItem } from '@bns/contracts';
import { errorMessage } from '../../api/errors.js';
import { useAppDispatch } from '../../app/hooks.js';
import { toast } from '../toasts/toasts.js';
import { followUp } from './chooseContacts.js';

/** A finished campaign's "Follow up": not read / read / replied / failed, into the sender. */
export function FollowUp({ job, disabled }: { job: JobHistoryItem; disabled?: boolean }) {
  const dispatch = useAppDispatch();
  const [busy, setBusy] = useState(false);
  const choose = async (kind: FollowUpKind) => {
    setBusy(true);
    try {
      await dispatch(followUp(job, kind));
    } catch (err) {
      toast.error(errorMessage(err));
    } finally {
      setBusy(false);
    }
  };
  return (
    <select
      aria-label="Follow up"
      className="button secondary small"
      value=""
      disabled={disabled || busy}
      onChange={(e) => e.target.value && void choose(e.target.value as FollowUpKind)}
    >
      <option value="">{busy ? 'Loading…' : 'Follow up…'}</option>
      {(Object.keys(FOLLOW_UPS) as FollowUpKind[]).map((k) => (
        <option key={k} value={k}>
          {FOLLOW_UPS[k].label}
        </option>
      ))}
    </select>
  );
}
