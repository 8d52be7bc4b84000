import { randomUUID } from 'node:crypto';
import { Injectable, Logger } from '@nestjs/common';
import { EventBus } from '@bns/service-kit';
import type { MessageStatusEvent, SessionStateEvent } from '@bns/contracts';

type StatePayload = Omit<SessionStateEvent, 'eventId' | 'userId' | 'at'>;
type StatusPayload = Omit<MessageStatusEvent, 'eventId' | 'userId' | 'at'>;

/** Publishes this module's events. A failed publish is logged: a lost UI hint must not break a link. */
@Injectable()
export class SessionEvents {
  private readonly logger = new Logger('SessionEvents');

  constructor(private readonly events: EventBus) {}

  async state(userId: string, payload: StatePayload): Promise<void> {
    await this.events
      .emit('events.session.state', { eventId: randomUUID(), userId, at: new Date().toISOString(), ...payload })
      .catch((err: unknown) => this.logger.warn({ err, userId, state: payload.state }, 'could not publish a session state'));
  }

  async messageStatus(userId: string, payload: StatusPayload): Promise<void> {
    await this.events
      .emit('events.message.status', { eventId: randomUUID(), userId, at: new Date().toISOString(), ...payload })
      .catch((err: unknown) => this.logger.warn({ err, userId, status: payload.status }, 'could not publish a message status'));
  }
}
