import type { JobProgressEvent, MessageReceivedEvent, MessageStatusEvent, SessionStateEvent } from '@bns/contracts';
import { MESSAGE_STATUS_RANK, normalizeHkPhone, SESSION_STATES } from '@bns/contracts';

export type ReadModelEvent =
  | { subject: 'events.message.status'; event: MessageStatusEvent }
  | { subject: 'events.session.state'; event: SessionStateEvent }
  | { subject: 'events.message.received'; event: MessageReceivedEvent }
  | { subject: 'events.job.progress'; event: JobProgressEvent };

/**
 * A sender as the read model names recipients: digits only (a WhatsApp id like `852…@c.us` loses its
 * suffix), and a Hong Kong number as its 8 digits, like the jobs service sends to them.
 */
export function senderNumber(from: string): string {
  const digits = from.replace(/@.*$/, '').replace(/\D/g, '');
  return normalizeHkPhone(digits) ?? digits;
}

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
    return {
      subject,
      event: { ...(e as unknown as MessageStatusEvent), content: (e.content as string | undefined) ?? '' },
    };
  }
  if (subject === 'events.message.received') {
    // Problems name the field, never its value: the text is personal data and these end up in the log.
    if (!str(e.from) || senderNumber(e.from) === '') return 'from is not a number';
    if (!str(e.text)) return 'text is not text';
    if (!str(e.messageId) || e.messageId === '') return 'messageId missing';
    // Postgres refuses NUL in text.
    return {
      subject,
      event: {
        ...(e as unknown as MessageReceivedEvent),
        from: senderNumber(e.from),
        text: e.text.replaceAll('\u0000', ''),
      },
    };
  }
  if (subject === 'events.job.progress') {
    if (!str(e.jobId) || e.jobId === '') return 'jobId missing';
    const p = e.progress as Record<string, unknown> | null | undefined;
    if (typeof p !== 'object' || p === null) return 'progress missing';
    const skipped = p.skipped ?? 0;
    if (!Number.isInteger(skipped) || (skipped as number) < 0) return 'progress.skipped is not a count';
    return { subject, event: e as unknown as JobProgressEvent };
  }
  if (subject === 'events.session.state') {
    if (!str(e.state) || !(SESSION_STATES as readonly string[]).includes(e.state))
      return `unknown state ${String(e.state)}`;
    return { subject, event: e as unknown as SessionStateEvent };
  }
  return `unexpected subject ${subject}`;
}
