import { Inject, Logger, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import {
  ConnectedSocket,
  MessageBody,
  SubscribeMessage,
  WebSocketGateway,
  WebSocketServer,
  type OnGatewayConnection,
  type OnGatewayDisconnect,
  type OnGatewayInit,
} from '@nestjs/websockets';
import type { NatsConnection, Subscription } from '@nats-io/transport-node';
import type { Server, Socket } from 'socket.io';
import type { IncomingMessage } from 'node:http';
import {
  checkWith,
  CommonErrorCode,
  CreateSessionPayloadSchema,
  ErrorKind,
  RequestPairingCodePayloadSchema,
  EVENTS_WILDCARD,
  MESSAGES,
  SESSION_MESSAGES,
  SOCKET,
  SOCKET_CLIENT_EVENTS,
  SOCKET_EVENTS,
  userRoom,
  type ClientToServerEvents,
  type EventKey,
  type EventEnvelope,
  type ServerToClientEvents,
  type SessionSocketError,
  type SocketEmission,
  type SocketEventMap,
} from '@bns/contracts';
import { AppError, fullCollection, NATS_CONNECTION, RpcClient, SERVICE_ENV } from '@bns/service-kit';
import { AuthFailures } from '../auth/auth-failures.js';
import { TOKEN_VERIFIER } from '../auth/auth.guard.js';
import type { AuthUser } from '../auth/auth.types.js';
import type { TokenVerifier } from '../auth/token-verifier.js';
import type { GatewayEnv } from '../config/env.js';
import { clientAddressOf, trustProxySetting } from '../http/trust-proxy.js';
import { RateLimiter } from '../rate-limit/rate-limiter.js';
import { countSocketEvent, trackSockets } from '../metrics/gateway.metrics.js';
import { JobStatusCache } from '../job-status-fast-path/index.js';
import { MemoryReturn } from './memory-return.js';
import { toSocketEmission } from './socket-events.js';

interface SocketData {
  user: AuthUser;
}
type TypedServer = Server<ClientToServerEvents, ServerToClientEvents, Record<string, never>, SocketData>;
export type AuthedSocket = Socket<ClientToServerEvents, ServerToClientEvents, Record<string, never>, SocketData>;
type Ack<K extends keyof SocketEventMap['clientToServer']> = SocketEventMap['clientToServer'][K]['ack'];

/** connect_error messages a client can act on. */
export const SOCKET_REFUSALS = {
  unauthorized: 'unauthorized',
  tooManyFailures: 'too many failed sign-ins, try again later',
  tooManySockets: 'too many connections for this user',
} as const;

/** Longest timer Node can arm; a token living longer is re-checked when it fires. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * socket.io at /socket.io. The handshake must carry a valid token (`auth: {token}`), else the client
 * gets connect_error "unauthorized". Each socket joins its user's room; every event on NATS is pushed
 * to the room of the user it belongs to, so any replica can serve any socket.
 *
 * Limits (per replica): SOCKETS_PER_USER open sockets per user (further handshakes are refused),
 * SOCKET_EVENTS_PER_SECOND/SOCKET_EVENTS_BURST client events per socket (past them an event is
 * answered with a RATE_LIMITED error and not handled), and a socket is closed when its token expires:
 * the client reconnects with a fresh token. Failed handshakes count against the client address like
 * failed HTTP sign-ins. The origin rule is GatewayIoAdapter's.
 */
// No `cors` here: GatewayIoAdapter applies CORS_ORIGINS to every handshake, polling and websocket alike.
@WebSocketGateway({ path: SOCKET.path, transports: [...SOCKET.transports] })
export class RealtimeGateway
  implements OnGatewayInit, OnGatewayConnection, OnGatewayDisconnect, OnModuleInit, OnModuleDestroy
{
  @WebSocketServer() server!: TypedServer;
  private subscription?: Subscription;
  private readonly logger = new Logger('RealtimeGateway');
  private readonly socketsByUser = new Map<string, Set<string>>();
  private readonly expiryTimers = new Map<string, NodeJS.Timeout>();
  private readonly eventLimiter: RateLimiter;
  private readonly clientAddress: (req: IncomingMessage) => string;
  /** A full garbage collection after a wave of closed sockets, so their memory comes back while idle. */
  private readonly memory?: MemoryReturn;

  constructor(
    @Inject(TOKEN_VERIFIER) private readonly verifier: TokenVerifier,
    @Inject(NATS_CONNECTION) private readonly nc: NatsConnection,
    private readonly rpc: RpcClient,
    @Inject(AuthFailures) private readonly failures: AuthFailures,
    @Inject(SERVICE_ENV) private readonly env: GatewayEnv,
    private readonly statusCache: JobStatusCache,
  ) {
    this.eventLimiter = new RateLimiter(env.SOCKET_EVENTS_PER_SECOND, env.SOCKET_EVENTS_BURST);
    this.clientAddress = clientAddressOf(trustProxySetting(env.TRUST_PROXY));
    const collect = fullCollection();
    if (collect)
      this.memory = new MemoryReturn(collect, undefined, (tookMs) =>
        this.logger.log({ tookMs: Math.round(tookMs) }, 'many sockets closed: a full garbage collection ran'),
      );
    else this.logger.warn('no full garbage collection on demand: memory of closed sockets comes back with traffic');
  }

  afterInit(server: TypedServer): void {
    trackSockets(server);
    // A signed-out session's sockets close at once, as they would at the token's expiry.
    this.verifier.onSignOut((sessionId) => {
      for (const socket of server.sockets.sockets.values()) {
        if ((socket as AuthedSocket).data.user?.sessionId === sessionId) socket.disconnect(true);
      }
    });
    server.use((socket, next) => {
      const address = this.clientAddress(socket.request);
      // As on HTTP: a valid token always gets through, so failed sign-ins from a shared address (an
      // office NAT, a proxy) cannot cut its signed-in users off live updates; failures from a blocked
      // address are refused as such.
      const token = (socket.handshake.auth as { token?: unknown } | undefined)?.token;
      this.verifier.verify(typeof token === 'string' ? token : undefined).then(
        (user) => {
          if ((this.socketsByUser.get(user.userId)?.size ?? 0) >= this.env.SOCKETS_PER_USER) {
            return next(new Error(SOCKET_REFUSALS.tooManySockets));
          }
          socket.data.user = user;
          next();
        },
        () => {
          if (this.failures.blocked(address)) return next(new Error(SOCKET_REFUSALS.tooManyFailures));
          this.failures.record(address);
          next(new Error(SOCKET_REFUSALS.unauthorized));
        },
      );
    });
  }

  async handleConnection(socket: AuthedSocket): Promise<void> {
    const user = socket.data.user;
    const mine = this.socketsByUser.get(user.userId) ?? new Set<string>();
    mine.add(socket.id);
    this.socketsByUser.set(user.userId, mine);
    this.memory?.opened();
    this.closeAtExpiry(socket, user.expiresAtMs);
    socket.use((packet, next) => {
      const verdict = this.eventLimiter.take(socket.id);
      if (verdict.allowed) return next();
      const error: SessionSocketError = { code: CommonErrorCode.RateLimited, message: MESSAGES.rateLimited };
      const ack = packet[packet.length - 1];
      if (typeof ack === 'function') (ack as (e: SessionSocketError) => void)(error);
      else socket.emit(SOCKET_EVENTS.sessionError, error);
    });
    await socket.join(userRoom(user.userId));
  }

  handleDisconnect(socket: AuthedSocket): void {
    const userId = socket.data.user?.userId;
    const mine = userId === undefined ? undefined : this.socketsByUser.get(userId);
    if (mine?.delete(socket.id)) this.memory?.closed();
    if (mine?.size === 0) this.socketsByUser.delete(userId!);
    clearTimeout(this.expiryTimers.get(socket.id));
    this.expiryTimers.delete(socket.id);
  }

  /** A socket lives no longer than its token; the client reconnects with a fresh one. */
  private closeAtExpiry(socket: AuthedSocket, expiresAtMs: number): void {
    const left = expiresAtMs - Date.now();
    const timer = setTimeout(
      () => {
        if (Date.now() < expiresAtMs) return this.closeAtExpiry(socket, expiresAtMs);
        socket.disconnect(true);
      },
      Math.max(0, Math.min(left, MAX_TIMER_MS)),
    );
    timer.unref();
    this.expiryTimers.set(socket.id, timer);
  }

  /** The client announces itself after connecting; the answer is an ack with who the socket is. */
  @SubscribeMessage(SOCKET_CLIENT_EVENTS.connected)
  onConnected(@ConnectedSocket() socket: AuthedSocket): Ack<'connected'> {
    return { success: true, userId: socket.data.user.userId };
  }

  /**
   * createSession {id, clerkUserId, isExplicitRequest?}: asks the user's shard; the states it reaches
   * come back to the user's room as events (every tab sees them), and the ack carries the first one.
   */
  @SubscribeMessage(SOCKET_CLIENT_EVENTS.createSession)
  async onCreateSession(
    @ConnectedSocket() socket: AuthedSocket,
    @MessageBody() body: unknown,
  ): Promise<Ack<'createSession'>> {
    const userId = socket.data.user.userId;
    const checked = checkWith(CreateSessionPayloadSchema, body);
    if (!checked.ok) {
      return this.socketError(socket, {
        code: CommonErrorCode.BadRequest,
        message: SESSION_MESSAGES.createSessionInvalid,
      });
    }
    if (checked.value.clerkUserId !== userId) {
      return this.socketError(socket, {
        code: CommonErrorCode.Forbidden,
        message: SESSION_MESSAGES.createSessionForbidden,
      });
    }
    try {
      return await this.rpc.call('sessions.connect', { userId, explicit: checked.value.isExplicitRequest === true });
    } catch (err) {
      const error = AppError.fromUnknown(err);
      this.logger.warn({ userId, code: error.code, message: error.message }, 'createSession failed');
      return this.socketError(socket, { code: error.code, message: SESSION_MESSAGES.createSessionFailed });
    }
  }

  /**
   * requestPairingCode {phoneNumber}: link by phone number (no createSession needed). The ack says the
   * request was taken; the codes come to the user's room as `pairing_code` {code, expiresAt}. A number
   * WhatsApp would not take, or an account already linked, is answered in plain words.
   */
  @SubscribeMessage(SOCKET_CLIENT_EVENTS.requestPairingCode)
  async onRequestPairingCode(
    @ConnectedSocket() socket: AuthedSocket,
    @MessageBody() body: unknown,
  ): Promise<Ack<'requestPairingCode'>> {
    const userId = socket.data.user.userId;
    const checked = checkWith(RequestPairingCodePayloadSchema, body);
    if (!checked.ok)
      return this.socketError(socket, {
        code: CommonErrorCode.BadRequest,
        message: SESSION_MESSAGES.pairingPhoneInvalid,
      });
    try {
      return await this.rpc.call('sessions.pairing.request', { userId, phoneNumber: checked.value.phoneNumber });
    } catch (err) {
      return this.sessionsRefusal(socket, userId, err, 'requestPairingCode failed');
    }
  }

  /** cancelPairingCode: back to the QR code. */
  @SubscribeMessage(SOCKET_CLIENT_EVENTS.cancelPairingCode)
  async onCancelPairingCode(@ConnectedSocket() socket: AuthedSocket): Promise<Ack<'cancelPairingCode'>> {
    const userId = socket.data.user.userId;
    try {
      return await this.rpc.call('sessions.pairing.cancel', { userId });
    } catch (err) {
      return this.sessionsRefusal(socket, userId, err, 'cancelPairingCode failed');
    }
  }

  /** A refusal the sessions service worded (bad input, a conflict) is passed on; anything else is "try again". */
  private sessionsRefusal(socket: AuthedSocket, userId: string, err: unknown, what: string): SessionSocketError {
    const error = AppError.fromUnknown(err);
    if (error.kind === ErrorKind.Validation || error.kind === ErrorKind.Conflict)
      return this.socketError(socket, { code: error.code, message: error.message });
    this.logger.warn({ userId, code: error.code, message: error.message }, what);
    return this.socketError(socket, { code: error.code, message: SESSION_MESSAGES.createSessionFailed });
  }

  private socketError(socket: AuthedSocket, error: SessionSocketError): SessionSocketError {
    socket.emit(SOCKET_EVENTS.sessionError, error);
    return error;
  }

  onModuleInit(): void {
    // Events missed while NATS was away: JobStatusCacheReset forgets what the job-status cache knows.
    this.subscription = this.nc.subscribe(EVENTS_WILDCARD, {
      callback: (err, msg) => {
        if (err) return;
        // Nobody here to tell (no socket, no job status kept): the event is not even parsed. Every
        // event of every user reaches every replica, about four per message sent.
        if (this.socketsByUser.size === 0 && this.statusCache.heardWhileEmpty()) return;
        try {
          const event = msg.json<EventEnvelope>();
          if (typeof event?.userId !== 'string') return;
          // Before the socket hears it: a poll made on the event shows the change (JobStatusCache).
          this.statusCache.changed(event.userId);
          // Every replica hears every user's events; only one with a socket of that user builds and
          // encodes the socket event (with N replicas, the others skip N-1 of each N events).
          if (!this.socketsByUser.has(event.userId)) return;
          const emission = toSocketEmission(msg.subject as EventKey, event as never);
          this.emitTo(event.userId, emission);
          countSocketEvent(emission.name);
        } catch (e) {
          this.logger.warn({ err: e, subject: msg.subject }, 'dropped an event that could not be forwarded');
        }
      },
    });
  }

  private emitTo(userId: string, emission: SocketEmission): void {
    const room = this.server.to(userRoom(userId));
    // socket.io's typed emit takes the name and its own payload; the union is narrowed per event.
    (room.emit as (name: string, ...payload: unknown[]) => boolean)(
      emission.name,
      ...(emission.payload === undefined ? [] : [emission.payload]),
    );
  }

  onModuleDestroy(): void {
    for (const timer of this.expiryTimers.values()) clearTimeout(timer);
    this.memory?.stop();
    this.subscription?.unsubscribe();
  }
}
