import { createHash, randomUUID } from 'node:crypto';
import { Injectable, Logger } from '@nestjs/common';
import { truncateAddress, type AuditKind, type AuditRecordedEvent } from '@bns/contracts';
import { EventBus } from '@bns/service-kit';
import type { AuthUser } from '../auth/auth.types.js';

export type AuditDetails = NonNullable<AuditRecordedEvent['details']>;

/** Who did it, as the log names them: the person (their e-mail, else their user id) or an API key. */
export interface AuditWho {
  userId: string;
  actor: string;
  /** The client's address as seen (req.ip); truncated before it leaves this process. */
  ip?: string;
}

export function personOf(user: AuthUser, ip?: string): AuditWho {
  return { userId: user.userId, actor: user.email ?? user.userId, ip };
}

/**
 * Publishes `events.audit.recorded` for an action this gateway performed (the integrations service
 * appends it to the user's log). Recorded after the action succeeded; a publish that fails is logged
 * and does not undo or fail the action the user already got.
 */
@Injectable()
export class AuditTrail {
  private readonly logger = new Logger('AuditTrail');

  constructor(private readonly events: EventBus) {}

  async record(kind: AuditKind, who: AuditWho, details?: AuditDetails, eventId: string = randomUUID()): Promise<void> {
    const address = truncateAddress(who.ip);
    try {
      await this.events.emit('events.audit.recorded', {
        eventId: `audit:${eventId}`,
        userId: who.userId,
        at: new Date().toISOString(),
        kind,
        actor: who.actor,
        ...(address ? { address } : {}),
        ...(details && Object.keys(details).length > 0 ? { details } : {}),
      });
    } catch (err) {
      this.logger.warn({ err: (err as Error).name, kind }, 'could not record an audit entry');
    }
  }
}

/** An event id that is the same on every replica for the same Clerk session: its sign-in is one entry. */
export function sessionSignInId(sessionId: string): string {
  return `signin:${createHash('sha256').update(sessionId).digest('base64url')}`;
}
