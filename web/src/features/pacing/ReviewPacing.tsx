import { useState } from 'react';
import { estimateSend, PAUSED_REASON_TEXT, POLICY_LIMITS, POLICY_MESSAGES, variantCount } from '@bns/contracts';
import { useAppDispatch, useAppSelector } from '../../app/hooks.js';
import { selectUserId } from '../auth/slice.js';
import { durationLabel, PRESET_LABEL, whenLabel } from './format.js';
import { useGetSendingPolicyQuery } from './pacingApi.js';
import { variationAt } from '../sender/variations.js';
import { checkSchedule, inputValueOf } from './schedule.js';
import { SendingPaceCard } from './SendingPaceCard.js';
import { SendsTodayLine } from './SendsTodayLine.js';
import { laterToggled, scheduleChosen, selectSendLater, selectStartAt } from './slice.js';

/**
 * The review step's pacing box: the policy in force, the estimate it gives (pauses, hours and caps
 * included), a warning for a large send at the fixed standard pace, the message's variants, Send later
 * (checked here, in the user's words, before Start), and the Sending pace card one click away.
 */
export function ReviewPacing({ count, message }: { count: number; message: string }) {
  const dispatch = useAppDispatch();
  const userId = useAppSelector(selectUserId);
  const startAt = useAppSelector(selectStartAt);
  const later = useAppSelector(selectSendLater);
  const { data: policy } = useGetSendingPolicyQuery(userId);
  const [editing, setEditing] = useState(false);
  const [typed, setTyped] = useState(startAt ? inputValueOf(startAt) : '');
  if (!policy) return null;
  const check = checkSchedule(typed);
  const chooseStart = (value: string) => {
    setTyped(value);
    const next = checkSchedule(value);
    dispatch(scheduleChosen(next.ok ? next.startAt : null));
  };
  const estimate = estimateSend(count, policy, { startAt: startAt ? new Date(startAt) : undefined });
  const variants = variantCount(message);
  const startsLater = !startAt && estimate.firstSendAt.getTime() - Date.now() > 60_000;
  return (
    <div className="summary-box pacing-review" data-testid="review-pacing">
      <h3>
        Sending pace
        <button
          type="button"
          className="button secondary small"
          aria-expanded={editing}
          onClick={() => setEditing(!editing)}
        >
          {editing ? 'Close' : 'Change'}
        </button>
      </h3>
      <p>
        <strong>{PRESET_LABEL[policy.preset]}</strong>
      </p>
      <SendsTodayLine />
      {count > 0 && (
        <p className="small">
          Estimated time with this pace: <strong>{durationLabel(estimate.estimatedTime)}</strong>
          {estimate.estimatedTime >= 60 && (
            <>
              ; the last message goes out around {whenLabel(estimate.estimatedFinishAt.toISOString(), policy.timeZone)}
            </>
          )}
          .
        </p>
      )}
      {count > 0 && startsLater && (
        <p className="small muted">
          {PAUSED_REASON_TEXT.window}: the first message goes out around{' '}
          {whenLabel(estimate.firstSendAt.toISOString(), policy.timeZone)}.
        </p>
      )}
      {policy.preset === 'standard' && count > POLICY_LIMITS.standardWarnRecipients && (
        <p className="notice notice-warning" role="note">
          {POLICY_MESSAGES.standardLargeWarning}
        </p>
      )}
      <label className="inline-check small">
        <input
          type="checkbox"
          checked={later}
          onChange={(e) => {
            dispatch(laterToggled(e.target.checked));
            if (e.target.checked) chooseStart(typed);
          }}
        />
        <span>Send later</span>
      </label>
      {later && (
        <div className="schedule">
          <label className="field">
            <span>Start sending at</span>
            <input
              type="datetime-local"
              value={typed}
              min={inputValueOf(new Date())}
              max={inputValueOf(new Date(Date.now() + POLICY_LIMITS.maxStartAheadMs))}
              aria-invalid={!check.ok && !check.empty}
              onChange={(e) => chooseStart(e.target.value)}
            />
          </label>
          {startAt ? (
            <p className="small">The job waits as scheduled until {whenLabel(startAt, policy.timeZone)}.</p>
          ) : check.ok ? null : check.empty ? (
            <p className="muted small">{check.message}</p>
          ) : (
            <p className="field-error" role="alert">
              {check.message}
            </p>
          )}
        </div>
      )}
      {variants > 1 && (
        <p className="small">
          {variants} variants of the text, one picked per recipient. The preview shows the first; another is{' '}
          <q>{variationAt(message, 1)}</q>.
        </p>
      )}
      {editing && <SendingPaceCard />}
    </div>
  );
}
