import { CommonErrorCode, ErrorKind, JOB_MESSAGES, SessionsErrorCode, type SessionSendReply } from '@bns/contracts';
import { AppError } from '@bns/service-kit';

/**
 * What a send's answer means for the recipient:
 * - `sent`: delivered to WhatsApp (a `duplicate` was sent before a crash and is only recorded now);
 * - `permanent`: will never work (not on WhatsApp, refused text): the recipient fails at once;
 * - `transient`: may pass on a retry (sessions failing, the engine failing): retried with backoff;
 * - `busy`: the same key is being sent right now (a send of a dead worker still in flight), or the
 *   WhatsApp service did not answer at all (a shard restarting or stalled, NATS away): asked again
 *   soon with the same key, without using a retry. Not the message's fault: a rolling restart of the
 *   shards must not fail one recipient of every account, and a request the shard gets too late is not
 *   acted on (it carries its deadline), so asking again sends it once;
 * - `unlinked`: the account is not linked: the whole job pauses, which is not the recipient's fault;
 * - `rate_limited`: WhatsApp pushed back (rate-overlimit): the account backs off, the recipient waits;
 * - `withheld`: never asked: the user cancelled or paused the job, or the recipient opted out, after
 *   its send was prepared ahead of its slot (JOBS_SEND_LEAD_MS), so the recipient goes back to waiting
 *   (an opted-out one is then passed over and counted skipped by the next take).
 * A transient failure the engine itself reported (`engine`) says something about the account: several
 * in a row are taken as pushback too.
 */
export type SendOutcome =
  | { kind: 'sent'; at: Date; duplicate: boolean; messageId: string }
  | { kind: 'transient'; error: string; engine?: boolean }
  // `code`: the sessions error code of a permanent failure (NOT_ON_WHATSAPP is remembered, so later jobs skip the number)
  | { kind: 'permanent'; error: string; code?: string }
  | { kind: 'busy' | 'unlinked' | 'rate_limited'; error: string }
  | { kind: 'withheld' };

export function outcomeOfReply(reply: SessionSendReply): SendOutcome {
  const at = new Date(reply.at);
  return {
    kind: 'sent',
    at: Number.isNaN(at.getTime()) ? new Date() : at,
    duplicate: reply.duplicate,
    messageId: reply.messageId,
  };
}

export function outcomeOfError(err: unknown): SendOutcome {
  const error = AppError.fromUnknown(err);
  if (error.code === SessionsErrorCode.NotLinked) return { kind: 'unlinked', error: error.message };
  if (error.code === SessionsErrorCode.SendInProgress) return { kind: 'busy', error: error.message };
  if (error.code === SessionsErrorCode.RateLimited) return { kind: 'rate_limited', error: error.message };
  // Still disconnected after waiting: not the message's fault, so it is asked again without using a retry.
  if (error.code === CommonErrorCode.NatsDisconnected) return { kind: 'busy', error: error.message };
  switch (error.kind) {
    case ErrorKind.Unavailable:
      return { kind: 'busy', error: JOB_MESSAGES.sessionsUnavailable };
    case ErrorKind.Internal:
    case ErrorKind.RateLimited:
      return { kind: 'transient', error: error.message || JOB_MESSAGES.sendFailed };
    default:
      // An engine failure without a verdict on the number may pass on another try.
      if (error.code === SessionsErrorCode.SendFailed)
        return { kind: 'transient', error: error.message || JOB_MESSAGES.sendFailed, engine: true };
      return { kind: 'permanent', error: error.message || JOB_MESSAGES.sendFailed, code: error.code };
  }
}
