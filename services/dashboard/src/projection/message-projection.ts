import { MESSAGE_STATUS_RANK, type MessageStatus, type MessageStatusEvent } from '@bns/contracts';

/** What the read model keeps of one message (a row of dashboard.messages). */
export interface MessageState {
  status: MessageStatus;
  /** The first of sent/failed this message reached; set once. */
  outcome: 'sent' | 'failed' | null;
  jobId: string;
  recipient: string;
  content: string;
  error: string | null;
  createdAt: Date;
  sentAt: Date | null;
}

export interface MessageStep {
  next: MessageState;
  /**
   * Set when this event gave the message its outcome: count it once, in this UTC month (`YYYY-MM-01`).
   * `moved`: the message was counted sent, and WhatsApp refused it afterwards: the count moves from
   * sent to failed in the month it was counted in.
   */
  counted?: { outcome: 'sent' | 'failed'; month: string; moved?: true };
}

/** delivered and read acks prove the message was sent, even when they overtake the 'sent' event. */
function outcomeOf(status: MessageStatus): 'sent' | 'failed' | null {
  if (status === 'failed') return 'failed';
  return status === 'pending' ? null : 'sent';
}

export function monthOf(at: Date): string {
  return `${at.toISOString().slice(0, 7)}-01`;
}

const earlier = (a: Date | null, b: Date): Date => (a === null || b < a ? b : a);

/**
 * Folds one status event into a message. A status only moves forward (MESSAGE_STATUS_RANK); sent and
 * failed share a rank, so the first of them wins; a late 'sent' never overwrites 'delivered' or 'read'.
 * Applying the same event twice changes nothing, which keeps replays harmless even without the
 * applied-events table.
 */
export function applyMessageEvent(prev: MessageState | undefined, event: MessageStatusEvent): MessageStep {
  const at = new Date(event.at);
  const cur: MessageState = prev ?? {
    status: 'pending',
    outcome: null,
    jobId: event.jobId,
    recipient: event.recipient,
    content: event.content,
    error: null,
    createdAt: at,
    sentAt: null,
  };
  const next: MessageState = {
    ...cur,
    // Acks from the sessions service may carry less than the job's own event: fill what is missing.
    jobId: cur.jobId || event.jobId,
    recipient: cur.recipient || event.recipient,
    content: cur.content || event.content,
    createdAt: earlier(cur.createdAt, at),
  };
  if (event.status !== 'pending') next.sentAt = earlier(cur.sentAt, at);

  if (MESSAGE_STATUS_RANK[event.status] > MESSAGE_STATUS_RANK[cur.status]) {
    next.status = event.status;
    next.error = event.status === 'failed' ? (event.error ?? null) : null;
  } else if (next.status === 'failed' && event.status === 'failed' && next.error === null) {
    next.error = event.error ?? null;
  }

  // Accepted, then refused (an error ack): never counted as sent. A message already delivered or read
  // keeps that (the jobs service's report does the same).
  if (event.status === 'failed' && event.refused === true && cur.status === 'sent') {
    next.status = 'failed';
    next.error = event.error ?? null;
    if (cur.outcome === 'sent') {
      next.outcome = 'failed';
      return { next, counted: { outcome: 'failed', month: monthOf(cur.sentAt ?? at), moved: true } };
    }
  }

  const outcome = outcomeOf(event.status);
  if (cur.outcome === null && outcome !== null) {
    next.outcome = outcome;
    return { next, counted: { outcome, month: monthOf(at) } };
  }
  return { next };
}
