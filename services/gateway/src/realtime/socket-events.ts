import { SOCKET_EVENTS, type EventKey, type EventMap, type SessionStateEvent } from '@bns/contracts';

export interface SocketEmission {
  name: string;
  payload?: unknown;
}

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
      return { name: SOCKET_EVENTS.noSession };
    case 'disconnected':
      return { name: SOCKET_EVENTS.disconnected, payload: { reason: e.reason } };
  }
}

/** What a user's sockets receive for one event; internal fields (event id, user id) stay behind. */
export function toSocketEmission<K extends EventKey>(subject: K, event: EventMap[K]): SocketEmission {
  if (subject === 'events.session.state') return sessionEmission(event as SessionStateEvent);
  const { eventId: _eventId, userId: _userId, ...payload } = event;
  const name =
    subject === 'events.job.progress' ? SOCKET_EVENTS.jobProgress : subject === 'events.job.log' ? SOCKET_EVENTS.jobLog : SOCKET_EVENTS.messageStatus;
  return { name, payload };
}
