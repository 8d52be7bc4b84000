import { randomUUID } from 'node:crypto';
import { Injectable, Logger } from '@nestjs/common';
import { EventBus } from '@bns/service-kit';
import type { AuditKind, SessionStateEvent } from '@bns/contracts';
import { trackLinkState } from '../metrics/sessions.metrics.js';
import { safeError } from '../redact.js';

type StatePayload = Omit<SessionStateEvent, 'eventId' | 'userId' | 'at'>;

/**
 * Publishes session states. A failed publish is logged: a lost UI hint must not break a link (the next
 * createSession or status call answers the current state). Receipts and inbound messages are durable
 * and go through the outbox instead (`MessageEvents`).
 */
@Injectable()
export class SessionEvents {
  private readonly logger = new Logger('SessionEvents');

  constructor(private readonly events: EventBus) {}

  async state(userId: string, payload: StatePayload): Promise<void> {
    trackLinkState(userId, payload.state);
    await this.events
      .emit('events.session.state', { eventId: randomUUID(), userId, at: new Date().toISOString(), ...payload })
      .catch((err: unknown) =>
        this.logger.warn({ err: safeError(err), userId, state: payload.state }, 'could not publish a session state'),
      );
  }

  /**
   * An audit entry for what happened on the phone's side (a link made by a scan, a link ended by
   * WhatsApp or on the phone); the actor is WhatsApp. Logged, never thrown, as a state is.
   */
  async audit(
    userId: string,
    kind: Extract<AuditKind, 'whatsapp.linked' | 'whatsapp.unlinked'>,
    sessionId: string,
  ): Promise<void> {
    await this.events
      .emit('events.audit.recorded', {
        eventId: `audit:${kind}:${sessionId}`,
        userId,
        at: new Date().toISOString(),
        kind,
        actor: 'whatsapp',
      })
      .catch((err: unknown) =>
        this.logger.warn({ err: safeError(err), userId, kind }, 'could not record an audit entry'),
      );
  }
}
