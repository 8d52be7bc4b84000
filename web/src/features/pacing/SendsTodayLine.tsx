import { useAppSelector } from '../../app/hooks.js';
import { selectUserId } from '../auth/slice.js';
import { useGetSendsTodayQuery } from './pacingApi.js';

/**
 * Today's sends beside the pace, and the messages that went to numbers that never replied (this month
 * and the last 30 days, against the limit when the policy has one): WhatsApp limits unanswered messages.
 */
export function SendsTodayLine() {
  const userId = useAppSelector(selectUserId);
  const { data: today } = useGetSendsTodayQuery(userId, { pollingInterval: 60_000 });
  if (!today) return null;
  const { unanswered } = today;
  return (
    <p className="small sends-today" data-testid="sends-today">
      Sent today: <strong>{today.sent}</strong>
      {today.cap !== null && <> of {today.cap}</>}
      {' · '}
      Unanswered: <strong>{unanswered.month}</strong> this month, <strong>{unanswered.last30Days}</strong> in the last
      30 days
      {unanswered.limit !== null && <> (limit {unanswered.limit})</>}
    </p>
  );
}
