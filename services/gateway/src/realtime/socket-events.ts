import {
  SOCKET_EVENTS,
  type EventKey,
  type EventMap,
  type SessionStateEvent,
  type SocketEmission,
} from '@bns/contracts';

/** Session states to the exact socket events and payloads of SPEC §7. */
function sessionEmission(e: SessionStateEvent): SocketEmission {
  switch (e.state) {
    case 'qr':
      return { name: SOCKET_EVENTS.qr, payload: { qr: e.qr, attempts: e.attempts } };
    case 'qr_max_attempts':
      return { name: SOCKET_EVENTS.qrMaxAttempts, payload: { message: e.message, attempts: e.attempts } };
    case 'ready':
      return { name: SOCKET_EVENTS.ready, payload: { id: e.sessionId, phoneNumber: e.phoneNumber } };
    case 'exist':
      return { name: SOCKET_EVENTS.exist, payload: { id: e.sessionId, phoneNumber: e.phoneNumber } };
    case 'creating':
      return { name: SOCKET_EVENTS.creating, payload: { message: e.message } };
    case 'no_session':
      return { name: SOCKET_EVENTS.noSession, payload: undefined };
    case 'disconnected':
      return { name: SOCKET_EVENTS.disconnected, payload: { reason: e.reason } };
    case 'pairing_code':
      return { name: SOCKET_EVENTS.pairingCode, payload: { code: e.code ?? '', expiresAt: e.expiresAt ?? '' } };
  }
}

/** What a user's sockets receive for one event; internal fields (event id, user id) stay behind. */
export function toSocketEmission<K extends EventKey>(subject: K, event: EventMap[K]): SocketEmission {
  switch (subject) {
    case 'events.session.state':
      return sessionEmission(event as SessionStateEvent);
    case 'events.job.progress': {
      const { eventId: _eventId, userId: _userId, ...payload } = event as EventMap['events.job.progress'];
      return { name: SOCKET_EVENTS.jobProgress, payload };
    }
    case 'events.job.log': {
      const { eventId: _eventId, userId: _userId, ...payload } = event as EventMap['events.job.log'];
      return { name: SOCKET_EVENTS.jobLog, payload };
    }
    case 'events.message.status': {
      const { eventId: _eventId, userId: _userId, ...payload } = event as EventMap['events.message.status'];
      return { name: SOCKET_EVENTS.messageStatus, payload };
    }
    case 'events.message.received': {
      // Who and when only: an inbound text is personal data and is not pushed around.
      const { from, at, messageId } = event as EventMap['events.message.received'];
      return { name: SOCKET_EVENTS.messageReceived, payload: { from, at, messageId } };
    }
    case 'events.user.deletion.requested': {
      const { deletionId } = event as EventMap['events.user.deletion.requested'];
      return { name: SOCKET_EVENTS.accountDeletion, payload: { deletionId } };
    }
    case 'events.user.deletion.receipt': {
      const { deletionId, service } = event as EventMap['events.user.deletion.receipt'];
      return { name: SOCKET_EVENTS.accountDeletion, payload: { deletionId, service } };
    }
    case 'events.audit.recorded': {
      // Kind and time only: who and from where are read from the log itself.
      const { kind, at } = event as EventMap['events.audit.recorded'];
      return { name: SOCKET_EVENTS.auditRecorded, payload: { kind, at } };
    }
  }
  const unknown: never = subject;
  throw new Error(`no socket event for ${String(unknown)}`);
}
