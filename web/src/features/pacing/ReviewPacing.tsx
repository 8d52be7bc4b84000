import { useState } from 'react';
import { checkStartAt, estimateSend, PAUSED_REASON_TEXT, pickVariation, POLICY_LIMITS, POLICY_MESSAGES, variantCount } from '@bns/contracts';
import { useAppDispatch, useAppSelector } from '../../app/hooks.js';
import { selectUserId } from '../auth/slice.js';
import { durationLabel, PRESET_LABEL, whenLabel } from './format.js';
import { useGetSendingPolicyQuery } from './pacingApi.js';
import { SendingPaceCard } from './SendingPaceCard.js';
import { scheduleChosen, selectStartAt } from './slice.js';

/** "2026-03-10T09:30" of an <input type="datetime-local"> for an instant, in the browser's zone. */
function inputValueOf(iso: string): string {
  const d = new Date(iso);
  return new Date(d.getTime() - d.getTimezoneOffset() * 60_000).toISOString().slice(0, 16);
}

/**
 * The review step's pacing box: the policy in force, the estimate it gives (pauses, hours and caps
 * included), a warning for a large send at the fixed standard pace, the message's variants, and the
 * Sending pace card one click away.
 */
export function ReviewPacing({ count, message }: { count: number; message: string }) {
  const dispatch = useAppDispatch();
  const userId = useAppSelector(selectUserId);
  const startAt = useAppSelector(selectStartAt);
  const { data: policy } = useGetSendingPolicyQuery(userId);
  const [editing, setEditing] = useState(false);
  const [later, setLater] = useState(startAt !== null);
  const [typed, setTyped] = useState(startAt ? inputValueOf(startAt) : '');
  const [problem, setProblem] = useState<string | null>(null);
  if (!policy) return null;
  const chooseStart = (value: string) => {
    setTyped(value);
    const at = value ? new Date(value) : undefined;
    const check = checkStartAt(at && !Number.isNaN(at.getTime()) ? at.toISOString() : value);
    if (check.ok && check.startAt) {
      setProblem(null);
      dispatch(scheduleChosen(check.startAt.toISOString()));
    } else {
      setProblem(check.ok ? null : check.message);
      dispatch(scheduleChosen(null));
    }
  };
  const estimate = estimateSend(count, policy, { startAt: startAt ? new Date(startAt) : undefined });
  const variants = variantCount(message);
  const startsLater = !startAt && estimate.firstSendAt.getTime() - Date.now() > 60_000;
  return (
    <div className="summary-box pacing-review" data-testid="review-pacing">
      <h3>
        Sending pace
        <button type="button" className="button secondary small" aria-expanded={editing} onClick={() => setEditing(!editing)}>
          {editing ? 'Close' : 'Change'}
        </button>
      </h3>
      <p>
        <strong>{PRESET_LABEL[policy.preset]}</strong>
      </p>
      {count > 0 && (
        <p className="small">
          Estimated time with this pace: <strong>{durationLabel(estimate.estimatedTime)}</strong>
          {estimate.estimatedTime >= 60 && <> (last message around {whenLabel(estimate.estimatedFinishAt.toISOString(), policy.timeZone)})</>}
        </p>
      )}
      {count > 0 && startsLater && (
        <p className="small muted">
          {PAUSED_REASON_TEXT.window}: the first message goes out around {whenLabel(estimate.firstSendAt.toISOString(), policy.timeZone)}.
        </p>
      )}
      {policy.preset === 'standard' && count > POLICY_LIMITS.standardWarnRecipients && (
        <p className="notice notice-warning" role="note">
          {POLICY_MESSAGES.standardLargeWarning}
        </p>
      )}
      <label className="small">
        <input
          type="checkbox"
          checked={later}
          onChange={(e) => {
            setLater(e.target.checked);
            if (!e.target.checked) {
              setProblem(null);
              dispatch(scheduleChosen(null));
            }
          }}
        />{' '}
        Send later
      </label>
      {later && (
        <p className="small">
          <input type="datetime-local" aria-label="Start sending at" value={typed} onChange={(e) => chooseStart(e.target.value)} />
          {startAt && <> — the job waits as scheduled until {whenLabel(startAt, policy.timeZone)}</>}
        </p>
      )}
      {problem && (
        <p className="field-error" role="alert">
          {problem}
        </p>
      )}
      {variants > 1 && (
        <p className="small">
          {variants} variants of the text, one per recipient, for example: <q>{pickVariation(message, 'preview')}</q>
        </p>
      )}
      {editing && <SendingPaceCard />}
    </div>
  );
}
