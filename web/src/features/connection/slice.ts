import { createSlice, type PayloadAction } from '@reduxjs/toolkit';

/** The WhatsApp link as Tab 1 shows it (SPEC §4 "WhatsApp connection"). */
export type ConnectionStatus =
  | 'unknown'
  | 'checking'
  | 'no_session'
  | 'connecting'
  | 'creating'
  | 'qr'
  | 'max_attempts'
  | 'connected'
  /** Linking by phone number: a code was asked for, or one is showing (`pairing`). */
  | 'pairing';

export type SocketStatus = 'idle' | 'connecting' | 'connected' | 'reconnecting' | 'failed';

export interface ConnectionState {
  status: ConnectionStatus;
  qr: string | null;
  attempts: number;
  maxAttemptsMessage: string | null;
  creatingMessage: string | null;
  sessionId: string | null;
  phoneNumber: string | null;
  socket: SocketStatus;
  /** Linking by phone number: the code showing and when (ISO) a new one replaces it; null until the first comes. */
  pairing?: { code: string; expiresAt: string } | null;
  /** Why the last requestPairingCode was refused (a number WhatsApp would not take), in the server's words. */
  pairingError?: string | null;
  /** Where the card was when a code was asked for: a refusal goes back there. */
  beforePairing?: ConnectionStatus | null;
  /** Sign Out was pressed: the link it ends is not a lost connection. */
  signingOut?: boolean;
  /** When (epoch ms) the server stopped being reachable (the socket dropped, or the browser went offline); null while it is. */
  offlineSince?: number | null;
  /** When the server was reached again after an outage (for "Connection restored"). */
  restoredAt?: number | null;
  /** The browser says it has no network (navigator.onLine). */
  browserOffline?: boolean;
}

export const initialConnectionState: ConnectionState = {
  status: 'unknown',
  qr: null,
  attempts: 0,
  maxAttemptsMessage: null,
  creatingMessage: null,
  sessionId: null,
  phoneNumber: null,
  socket: 'idle',
};

const waiting = (s: ConnectionState) => s.status === 'unknown' || s.status === 'checking' || s.status === 'creating';

export const connectionSlice = createSlice({
  name: 'connection',
  initialState: initialConnectionState,
  reducers: {
    signOutStarted(s) {
      s.signingOut = true;
    },
    socketStatusChanged: {
      reducer(s, a: PayloadAction<SocketStatus, string, { at: number }>) {
        s.socket = a.payload;
        if (a.payload === 'reconnecting' || a.payload === 'failed') s.offlineSince ??= a.meta.at;
        if (a.payload === 'connected' && s.offlineSince != null && !s.browserOffline) {
          s.restoredAt = a.meta.at;
          s.offlineSince = null;
        }
        if (a.payload === 'idle') {
          s.offlineSince = null;
          s.restoredAt = null;
        }
      },
      prepare: (status: SocketStatus) => ({ payload: status, meta: { at: Date.now() } }),
    },
    /** The browser's `online` / `offline` events. */
    networkChanged: {
      reducer(s, a: PayloadAction<boolean, string, { at: number }>) {
        s.browserOffline = !a.payload;
        if (!a.payload) s.offlineSince ??= a.meta.at;
        // Back online with the socket still up (a short drop it did not notice): that is a restore too.
        else if (s.socket === 'connected' && s.offlineSince != null) {
          s.restoredAt = a.meta.at;
          s.offlineSince = null;
        }
      },
      prepare: (online: boolean) => ({ payload: online, meta: { at: Date.now() } }),
    },
    /** A non-explicit createSession went out: is there a link already? */
    checkStarted(s) {
      if (s.status === 'unknown') s.status = 'checking';
    },
    checkTimedOut(s) {
      if (s.status === 'checking') s.status = 'no_session';
    },
    /** The Connect WhatsApp button: an explicit createSession. */
    connectRequested(s) {
      s.status = 'connecting';
      s.qr = null;
      s.attempts = 0;
      s.maxAttemptsMessage = null;
    },
    connectTimedOut(s) {
      if (s.status === 'connecting' || s.status === 'creating') s.status = 'no_session';
    },
    /** requestPairingCode went out: the card waits for the code. */
    pairingCodeRequested(s) {
      if (s.status !== 'pairing') s.beforePairing = s.status;
      s.status = 'pairing';
      s.pairing = null;
      s.pairingError = null;
      s.maxAttemptsMessage = null;
    },
    pairingCodeRefused(s, a: PayloadAction<string>) {
      s.pairingError = a.payload;
      if (s.status === 'pairing' && !s.pairing) s.status = s.beforePairing ?? 'no_session';
    },
    pairingCodeReceived(s, a: PayloadAction<{ code: string; expiresAt: string }>) {
      if (s.status === 'connected') return;
      s.status = 'pairing';
      s.pairing = a.payload;
    },
    /** Back to the QR (cancelled, or the request was refused): the next QR code shows. */
    pairingCancelled(s) {
      if (s.status !== 'pairing') return;
      s.status = s.qr ? 'qr' : 'connecting';
      s.pairing = null;
    },
    qrReceived(s, a: PayloadAction<{ qr: string; attempts: number }>) {
      s.pairing = null;
      s.status = 'qr';
      s.qr = a.payload.qr;
      s.attempts = a.payload.attempts;
    },
    qrMaxAttempts(s, a: PayloadAction<{ message: string; attempts: number }>) {
      s.status = 'max_attempts';
      s.maxAttemptsMessage = a.payload.message;
      s.attempts = a.payload.attempts;
    },
    sessionReady(s, a: PayloadAction<{ id: string | null; phoneNumber: string | null }>) {
      s.status = 'connected';
      s.sessionId = a.payload.id;
      s.phoneNumber = a.payload.phoneNumber;
      s.qr = null;
      s.pairing = null;
      s.maxAttemptsMessage = null;
    },
    /** Another request is already making or restoring the link. */
    sessionCreating(s, a: PayloadAction<{ message: string | null }>) {
      s.creatingMessage = a.payload.message;
      // A QR on screen or a running connect stays as it is; only a waiting screen becomes "creating".
      if (waiting(s) || s.status === 'no_session') s.status = 'creating';
    },
    /** no_session answers a check; it means nothing while our own explicit connect is under way. */
    noSession(s) {
      if (waiting(s) || s.status === 'connected') {
        s.status = 'no_session';
        s.phoneNumber = null;
        s.sessionId = null;
      }
    },
    /** createSession was refused or the sessions service did not answer: back to the Connect button. */
    sessionRequestFailed(s) {
      if (waiting(s) || s.status === 'connecting') s.status = 'no_session';
    },
    /** The phone unlinked (or the server lost the link). */
    sessionDisconnected(s) {
      s.pairing = null;
      s.status = 'no_session';
      s.phoneNumber = null;
      s.sessionId = null;
      s.qr = null;
    },
  },
  selectors: {
    selectConnection: (s) => s,
    selectIsConnected: (s) => s.status === 'connected',
    /** Whether the server can be reached now (the socket is up and the browser online): live counts are true. */
    selectServerReachable: (s) => s.socket === 'connected' && !s.browserOffline,
  },
});

export const {
  signOutStarted,
  socketStatusChanged,
  networkChanged,
  checkStarted,
  checkTimedOut,
  connectRequested,
  connectTimedOut,
  qrReceived,
  qrMaxAttempts,
  pairingCodeRequested,
  pairingCodeReceived,
  pairingCancelled,
  pairingCodeRefused,
  sessionReady,
  sessionCreating,
  noSession,
  sessionDisconnected,
  sessionRequestFailed,
} = connectionSlice.actions;
export const { selectConnection, selectIsConnected, selectServerReachable } = connectionSlice.selectors;
