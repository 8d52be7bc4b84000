import type { MessageStatusEvent, SessionStateEvent } from '@bns/contracts';
import { MESSAGE_STATUS_RANK, SESSION_STATES } from '@bns/contracts';

export type ReadModelEvent =
  | { subject: 'events.message.status'; event: MessageStatusEvent }
  | { subject: 'events.session.state'; event: SessionStateEvent };

const str = (v: unknown): v is string => typeof v === 'string';
const validTime = (v: unknown): boolean => str(v) && !Number.isNaN(Date.parse(v));

/**
 * Checks an event off the stream before it touches the database. A malformed event can never be
 * applied, so the consumer drops it (and logs it) instead of retrying forever.
 */
export function parseReadModelEvent(subject: string, body: unknown): ReadModelEvent | string {
  if (typeof body !== 'object' || body === null) return 'not a JSON object';
  const e = body as Record<string, unknown>;
  if (!str(e.eventId) || e.eventId === '') return 'eventId missing';
  if (!str(e.userId) || e.userId === '') return 'userId missing';
  if (!validTime(e.at)) return 'at is not a time';
  if (subject === 'events.message.status') {
    if (!str(e.status) || !(e.status in MESSAGE_STATUS_RANK)) return `unknown status ${String(e.status)}`;
    if (!str(e.idempotencyKey) || e.idempotencyKey === '') return 'idempotencyKey missing';
    if (!str(e.jobId) || !str(e.recipient)) return 'jobId or recipient missing';
    if (e.content !== undefined && !str(e.content)) return 'content is not text';
    if (e.error !== undefined && e.error !== null && !str(e.error)) return 'error is not text';
    return { subject, event: { ...(e as unknown as MessageStatusEvent), content: (e.content as string | undefined) ?? '' } };
  }
  if (subject === 'events.session.state') {
    if (!str(e.state) || !(SESSION_STATES as readonly string[]).includes(e.state)) return `unknown state ${String(e.state)}`;
    return { subject, event: e as unknown as SessionStateEvent };
  }
  return `unexpected subject ${subject}`;
}
