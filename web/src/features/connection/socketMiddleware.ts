import { createAction, type Middleware } from '@reduxjs/toolkit';
import { io, type ManagerOptions, type Socket, type SocketOptions } from 'socket.io-client';
import {
  MESSAGES,
  SOCKET,
  SOCKET_CLIENT_EVENTS,
  SOCKET_EVENTS,
  type ClientToServerEvents,
  type ServerToClientEvents,
  type SocketEventMap,
} from '@bns/contracts';
import { getToken } from '../../api/token.js';
import { toast } from '../toasts/toasts.js';
import { jobLogKey, logAdded } from '../activity/slice.js';
import { jobProgressEvent, monitoringResumed, selectCanResumeMonitoring } from '../job/slice.js';
import { messageStatusReceived } from '../results/receiptsSlice.js';
import {
  checkStarted,
  noSession,
  pairingCancelled,
  pairingCodeReceived,
  pairingCodeRefused,
  pairingCodeRequested,
  qrMaxAttempts,
  qrReceived,
  sessionCreating,
  sessionDisconnected,
  sessionReady,
  networkChanged,
  sessionRequestFailed,
  socketStatusChanged,
} from './slice.js';

export const socketConnect = createAction('socket/connect');
export const socketDisconnect = createAction('socket/disconnect');
/** A contact wrote to the linked number (who and when only): it may have been an opt-out keyword. */
export const inboundMessageReceived = createAction<{ from: string; at: string }>('socket/messageReceived');
/** createSession {id, clerkUserId, isExplicitRequest?} (SPEC §7). */
export const createSessionRequested = createAction<{ explicit: boolean }>('socket/createSession');

/** requestPairingCode {phoneNumber}: link by phone number; a refusal lands in `pairingError`. */
export const pairingCodeAsked = createAction<{ phoneNumber: string }>('socket/requestPairingCode');
/** cancelPairingCode: back to the QR code. */
export const pairingCancelAsked = createAction('socket/cancelPairingCode');

/** The socket typed by the contracts' SocketEventMap: every event name and payload is checked on this end too. */
export type AppSocket = Socket<ServerToClientEvents, ClientToServerEvents>;
export type SocketFactory = (opts: Partial<ManagerOptions & SocketOptions>) => AppSocket;
type CreateSessionAck = SocketEventMap['clientToServer']['createSession']['ack'];

/** The SPEC §7 client options: polling then websocket, 30 s timeout, 10 reconnects 1–5 s apart. */
export function socketOptions(): Partial<ManagerOptions & SocketOptions> {
  return {
    path: SOCKET.path,
    transports: [...SOCKET.transports],
    timeout: SOCKET.timeoutMs,
    reconnection: true,
    reconnectionAttempts: SOCKET.reconnectionAttempts,
    reconnectionDelay: SOCKET.reconnectionDelayMs,
    reconnectionDelayMax: SOCKET.reconnectionDelayMaxMs,
    // A function, so every (re)connect carries a fresh token (Clerk tokens live a minute).
    auth: (cb) => {
      void getToken().then((token) => cb({ token }));
    },
  };
}

interface SessionState {
  session: { userId: string; clientId: string };
}

/**
 * Owns the one socket.io connection: opens it on socket/connect, closes it on socket/disconnect,
 * turns server events into actions and the spec's connection toasts (SPEC §8).
 */
export function createSocketMiddleware(
  factory: SocketFactory = (opts) => io(opts),
  onUnauthorized: () => void = () => undefined,
): Middleware {
  let socket: AppSocket | null = null;
  let errorShown = false;
  let stopWatchingNetwork = () => {};

  return (store) => (next) => (action) => {
    const dispatch = store.dispatch;
    const state = () => store.getState() as SessionState;
    const createSession = (explicit: boolean) =>
      socket?.emit(
        SOCKET_CLIENT_EVENTS.createSession,
        {
          id: state().session.clientId,
          clerkUserId: state().session.userId,
          ...(explicit ? { isExplicitRequest: true } : {}),
        },
        // The ack carries the first state (the same one also reaches the room as an event; reducers are idempotent).
        (reply: CreateSessionAck | undefined) => {
          if (!reply) return;
          if ('code' in reply) {
            toast.error(reply.message);
            dispatch(sessionRequestFailed());
            return;
          }
          switch (reply.state) {
            case 'ready':
            case 'exist':
              dispatch(sessionReady({ id: reply.sessionId ?? null, phoneNumber: reply.phoneNumber ?? null }));
              break;
            case 'no_session':
            case 'disconnected':
              dispatch(noSession());
              break;
            case 'creating':
              dispatch(sessionCreating({ message: null }));
              break;
            default:
              // qr and qr_max_attempts come as their own events, with the QR string and the message.
              break;
          }
        },
      );

    if (socketConnect.match(action)) {
      if (socket) return next(action);
      const s = factory(socketOptions());
      socket = s;
      dispatch(socketStatusChanged('connecting'));
      // SPEC §4.1: checking starts on load, not when the socket connects, so a socket that never
      // connects still ends in the Connect button after 30 s.
      dispatch(checkStarted());

      s.on('connect', () => {
        errorShown = false;
        dispatch(socketStatusChanged('connected'));
        // Following the job on screen stopped while the server could not be reached: it goes on by itself.
        if (selectCanResumeMonitoring(store.getState() as Parameters<typeof selectCanResumeMonitoring>[0]))
          dispatch(monitoringResumed());
        s.emit(SOCKET_CLIENT_EVENTS.connected);
        dispatch(checkStarted());
        createSession(false);
      });
      s.on('connect_error', (err: Error) => {
        if (err.message === 'unauthorized') {
          onUnauthorized();
          return;
        }
        dispatch(socketStatusChanged(s.active ? 'reconnecting' : 'failed'));
        // Timeouts retry quietly; other errors are said once per outage, not once per retry.
        if (!/timeout/i.test(err.message) && !errorShown) {
          errorShown = true;
          toast.error(MESSAGES.connectionError);
        }
      });
      s.on('disconnect', (reason) => {
        dispatch(socketStatusChanged(reason === 'io client disconnect' ? 'idle' : 'reconnecting'));
        // The server closing the socket does not reconnect by itself (SPEC §8: it triggers a reconnect).
        if (reason === 'io server disconnect') s.connect();
      });
      s.io.on('reconnect', () => toast.success(MESSAGES.connectionRestored));
      s.io.on('reconnect_failed', () => {
        dispatch(socketStatusChanged('failed'));
        toast.error(MESSAGES.connectionFailed);
      });
      // The browser's own word on the network: "offline since" starts at once, and a socket that gave up
      // its reconnects while the network was gone tries again when it comes back.
      if (typeof window !== 'undefined') {
        const online = () => {
          dispatch(networkChanged(true));
          if (!s.connected && !s.active) s.connect();
        };
        const offline = () => dispatch(networkChanged(false));
        window.addEventListener('online', online);
        window.addEventListener('offline', offline);
        if (typeof navigator !== 'undefined' && navigator.onLine === false) offline();
        stopWatchingNetwork = () => {
          window.removeEventListener('online', online);
          window.removeEventListener('offline', offline);
        };
      }

      s.on(SOCKET_EVENTS.qr, (p) => dispatch(qrReceived({ qr: p?.qr ?? '', attempts: p?.attempts ?? 0 })));
      s.on(SOCKET_EVENTS.qrMaxAttempts, (p) =>
        dispatch(qrMaxAttempts({ message: p?.message ?? '', attempts: p?.attempts ?? 0 })),
      );
      s.on(SOCKET_EVENTS.pairingCode, (p) =>
        dispatch(pairingCodeReceived({ code: p?.code ?? '', expiresAt: p?.expiresAt ?? '' })),
      );
      s.on(SOCKET_EVENTS.ready, (p) =>
        dispatch(sessionReady({ id: p?.id ?? null, phoneNumber: p?.phoneNumber ?? null })),
      );
      s.on(SOCKET_EVENTS.exist, (p) =>
        dispatch(sessionReady({ id: p?.id ?? null, phoneNumber: p?.phoneNumber ?? null })),
      );
      s.on(SOCKET_EVENTS.creating, (p) => dispatch(sessionCreating({ message: p?.message ?? null })));
      s.on(SOCKET_EVENTS.noSession, () => dispatch(noSession()));
      s.on(SOCKET_EVENTS.disconnected, () => dispatch(sessionDisconnected()));
      s.on(SOCKET_EVENTS.messageStatus, (p) => dispatch(messageStatusReceived(p)));
      s.on(SOCKET_EVENTS.jobProgress, (p) => dispatch(jobProgressEvent(p)));
      s.on(SOCKET_EVENTS.messageReceived, (p) =>
        dispatch(inboundMessageReceived({ from: p?.from ?? '', at: p?.at ?? '' })),
      );
      s.on(SOCKET_EVENTS.jobLog, (p) => {
        const current = (store.getState() as { job: { jobId: string | null } }).job.jobId;
        if (p.jobId !== current) return;
        dispatch(logAdded({ type: p.type, message: p.message, timestamp: p.timestamp, key: jobLogKey(p.jobId, p) }));
      });
      return next(action);
    }

    if (socketDisconnect.match(action)) {
      stopWatchingNetwork();
      socket?.removeAllListeners();
      socket?.io.removeAllListeners();
      socket?.disconnect();
      socket = null;
      dispatch(socketStatusChanged('idle'));
      return next(action);
    }

    if (pairingCodeAsked.match(action)) {
      const result = next(action);
      dispatch(pairingCodeRequested());
      socket?.emit(SOCKET_CLIENT_EVENTS.requestPairingCode, { phoneNumber: action.payload.phoneNumber }, (reply) => {
        if (reply && 'code' in reply) dispatch(pairingCodeRefused(reply.message));
      });
      return result;
    }

    if (pairingCancelAsked.match(action)) {
      const result = next(action);
      dispatch(pairingCancelled());
      socket?.emit(SOCKET_CLIENT_EVENTS.cancelPairingCode, (reply) => {
        if (reply && 'code' in reply) toast.error(reply.message);
      });
      return result;
    }

    if (createSessionRequested.match(action)) {
      createSession(action.payload.explicit);
      return next(action);
    }

    return next(action);
  };
}
