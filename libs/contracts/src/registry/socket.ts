import type { MessageStatusEvent } from '../common/events.js';
import type { JobLogEvent, JobProgressEvent } from '../jobs/events.js';
import type { SessionStatusReply } from '../sessions/rpc.js';
import type { CreateSessionPayload, RequestPairingCodePayload } from '../sessions/schemas.js';
import type { PairingCancelReply, PairingCodeReply } from '../sessions/rpc.js';

/** Socket settings both ends use (SPEC §7): the server listens where the client connects. */
export const SOCKET = {
  path: '/socket.io',
  transports: ['polling', 'websocket'] as const,
  timeoutMs: 30_000,
  reconnectionAttempts: 10,
  reconnectionDelayMs: 1000,
  reconnectionDelayMaxMs: 5000,
} as const;

/** Socket.io event names the gateway emits to a user's room (SPEC §7 names, plus job events). */
export const SOCKET_EVENTS = {
  qr: 'qr',
  qrMaxAttempts: 'qr_max_attempts',
  ready: 'ready',
  exist: 'exist',
  creating: 'creating',
  noSession: 'no_session',
  disconnected: 'disconnected',
  jobProgress: 'job_progress',
  jobLog: 'job_log',
  messageStatus: 'message_status',
  /** A recipient wrote back: who and when, never the text (the text stays in the dashboard read model). */
  messageReceived: 'message_received',
  /** Linking by phone number: the code to enter on the phone and when it expires. */
  pairingCode: 'pairing_code',
  /** A refused or failed createSession (not one of SPEC §7's states). */
  sessionError: 'session_error',
  /** The account's deletion was requested (no `service`), or one service deleted its part (`service`). */
  accountDeletion: 'account_deletion',
  /** An entry was added to the audit log (its kind and time: the list is fetched again). */
  auditRecorded: 'audit_recorded',
} as const;

/** Client → server socket events (SPEC §7). */
export const SOCKET_CLIENT_EVENTS = {
  connected: 'connected',
  createSession: 'createSession',
  /** Link by phone number instead of the QR: {phoneNumber}; the codes come as `pairing_code`. */
  requestPairingCode: 'requestPairingCode',
  /** Stop linking by phone number: back to the QR code. */
  cancelPairingCode: 'cancelPairingCode',
} as const;

/** What a refused or failed createSession says (event `session_error`, and the ack). */
export interface SessionSocketError {
  code: string;
  message: string;
}

/** An event as a socket receives it: the internal fields (event id, user id) stay on the server. */
type Forwarded<E> = Omit<E, 'eventId' | 'userId'>;

/** The session payloads of SPEC §7. */
export interface LinkedPayload {
  id?: string;
  phoneNumber?: string;
}

/** `pairing_code`: the 8-character code to enter on the phone, and when (ISO time) a new one replaces it. */
export interface PairingCodePayload {
  code: string;
  expiresAt: string;
}

/**
 * Every socket event with its payload, both ways. The gateway (`realtime.gateway.ts`) and the web
 * (`socketMiddleware.ts`) type their socket.io ends with these maps, so a payload cannot drift
 * between the two.
 */
export interface SocketEventMap {
  serverToClient: {
    qr: { qr?: string; attempts?: number };
    qr_max_attempts: { message?: string; attempts?: number };
    ready: LinkedPayload;
    exist: LinkedPayload;
    creating: { message?: string };
    no_session: undefined;
    disconnected: { reason?: string };
    job_progress: Forwarded<JobProgressEvent>;
    job_log: Forwarded<JobLogEvent>;
    message_status: Forwarded<MessageStatusEvent>;
    message_received: { from: string; at: string; messageId: string };
    pairing_code: PairingCodePayload;
    session_error: SessionSocketError;
    account_deletion: { deletionId: string; service?: string };
    audit_recorded: { kind: string; at: string };
  };
  clientToServer: {
    connected: { payload: undefined; ack: { success: true; userId: string } };
    /** The ack carries the first state reached (or the error). */
    createSession: { payload: CreateSessionPayload; ack: SessionStatusReply | SessionSocketError };
    /** The ack says the request was taken (or the error); the code comes as `pairing_code`. */
    requestPairingCode: { payload: RequestPairingCodePayload; ack: PairingCodeReply | SessionSocketError };
    cancelPairingCode: { payload: undefined; ack: PairingCancelReply | SessionSocketError };
  };
}

export type ServerEventName = keyof SocketEventMap['serverToClient'];
export type ServerEventPayload<K extends ServerEventName> = SocketEventMap['serverToClient'][K];
export type ClientEventName = keyof SocketEventMap['clientToServer'];

/** One server → client emission, name and payload tied together. */
export type SocketEmission = { [K in ServerEventName]: { name: K; payload: ServerEventPayload<K> } }[ServerEventName];

/** socket.io's listener maps (`Server<ClientToServerEvents, ServerToClientEvents>`, `Socket<ServerToClientEvents, ClientToServerEvents>`). */
export type ServerToClientEvents = {
  [K in ServerEventName]: ServerEventPayload<K> extends undefined
    ? () => void
    : (payload: ServerEventPayload<K>) => void;
};
export type ClientToServerEvents = {
  connected: (ack?: (reply: SocketEventMap['clientToServer']['connected']['ack']) => void) => void;
  createSession: (
    payload: SocketEventMap['clientToServer']['createSession']['payload'],
    ack?: (reply: SocketEventMap['clientToServer']['createSession']['ack']) => void,
  ) => void;
  requestPairingCode: (
    payload: SocketEventMap['clientToServer']['requestPairingCode']['payload'],
    ack?: (reply: SocketEventMap['clientToServer']['requestPairingCode']['ack']) => void,
  ) => void;
  cancelPairingCode: (ack?: (reply: SocketEventMap['clientToServer']['cancelPairingCode']['ack']) => void) => void;
};

// Every name in the constants is in the map and the other way round.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const _serverNames: Same<(typeof SOCKET_EVENTS)[keyof typeof SOCKET_EVENTS], ServerEventName> = true;
const _clientNames: Same<(typeof SOCKET_CLIENT_EVENTS)[keyof typeof SOCKET_CLIENT_EVENTS], ClientEventName> = true;
void _serverNames;
void _clientNames;
