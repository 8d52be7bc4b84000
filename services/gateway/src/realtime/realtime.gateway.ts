import { Inject, Logger, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import {
  ConnectedSocket,
  MessageBody,
  SubscribeMessage,
  WebSocketGateway,
  WebSocketServer,
  type OnGatewayConnection,
  type OnGatewayInit,
} from '@nestjs/websockets';
import type { NatsConnection, Subscription } from '@nats-io/transport-node';
import type { Server, Socket } from 'socket.io';
import {
  CommonErrorCode,
  EVENTS_WILDCARD,
  SESSION_MESSAGES,
  SESSION_SOCKET_ERROR,
  SOCKET_CLIENT_EVENTS,
  userRoom,
  type EventKey,
  type EventEnvelope,
  type SessionSocketError,
  type SessionStatusReply,
} from '@bns/contracts';
import { AppError, NATS_CONNECTION, RpcClient } from '@bns/service-kit';
import { TOKEN_VERIFIER } from '../auth/auth.guard.js';
import type { AuthUser } from '../auth/auth.types.js';
import type { TokenVerifier } from '../auth/token-verifier.js';
import { toSocketEmission } from './socket-events.js';

export type AuthedSocket = Socket & { data: { user: AuthUser } };

/**
 * socket.io at /socket.io. The handshake must carry a valid token (`auth: {token}`), else the client
 * gets connect_error "unauthorized". Each socket joins its user's room; every event on NATS is pushed
 * to the room of the user it belongs to, so any replica can serve any socket.
 */
@WebSocketGateway({ path: '/socket.io', transports: ['polling', 'websocket'], cors: { origin: true, credentials: true } })
export class RealtimeGateway implements OnGatewayInit, OnGatewayConnection, OnModuleInit, OnModuleDestroy {
  @WebSocketServer() server!: Server;
  private subscription?: Subscription;
  private readonly logger = new Logger('RealtimeGateway');

  constructor(
    @Inject(TOKEN_VERIFIER) private readonly verifier: TokenVerifier,
    @Inject(NATS_CONNECTION) private readonly nc: NatsConnection,
    private readonly rpc: RpcClient,
  ) {}

  afterInit(server: Server): void {
    server.use((socket, next) => {
      const token = (socket.handshake.auth as { token?: unknown } | undefined)?.token;
      this.verifier.verify(typeof token === 'string' ? token : undefined).then(
        (user) => {
          socket.data.user = user;
          next();
        },
        () => next(new Error('unauthorized')),
      );
    });
  }

  async handleConnection(socket: AuthedSocket): Promise<void> {
    await socket.join(userRoom(socket.data.user.userId));
  }

  /** The client announces itself after connecting; the answer is an ack with who the socket is. */
  @SubscribeMessage(SOCKET_CLIENT_EVENTS.connected)
  onConnected(@ConnectedSocket() socket: AuthedSocket): { success: true; userId: string } {
    return { success: true, userId: socket.data.user.userId };
  }

  /**
   * createSession {id, clerkUserId, isExplicitRequest?}: asks the user's shard; the states it reaches
   * come back to the user's room as events (every tab sees them), and the ack carries the first one.
   */
  @SubscribeMessage(SOCKET_CLIENT_EVENTS.createSession)
  async onCreateSession(@ConnectedSocket() socket: AuthedSocket, @MessageBody() body: unknown): Promise<SessionStatusReply | SessionSocketError> {
    const userId = socket.data.user.userId;
    const request = (typeof body === 'object' && body !== null ? body : {}) as { clerkUserId?: unknown; isExplicitRequest?: unknown };
    if (request.clerkUserId !== userId) {
      return this.socketError(socket, { code: CommonErrorCode.Forbidden, message: SESSION_MESSAGES.createSessionForbidden });
    }
    try {
      return await this.rpc.call('sessions.connect', { userId, explicit: request.isExplicitRequest === true });
    } catch (err) {
      const error = AppError.fromUnknown(err);
      this.logger.warn({ userId, code: error.code, message: error.message }, 'createSession failed');
      return this.socketError(socket, { code: error.code, message: SESSION_MESSAGES.createSessionFailed });
    }
  }

  private socketError(socket: AuthedSocket, error: SessionSocketError): SessionSocketError {
    socket.emit(SESSION_SOCKET_ERROR, error);
    return error;
  }

  onModuleInit(): void {
    this.subscription = this.nc.subscribe(EVENTS_WILDCARD, {
      callback: (err, msg) => {
        if (err) return;
        try {
          const event = msg.json<EventEnvelope>();
          if (typeof event?.userId !== 'string') return;
          const { name, payload } = toSocketEmission(msg.subject as EventKey, event as never);
          this.server.to(userRoom(event.userId)).emit(name, payload);
        } catch (e) {
          this.logger.warn({ err: e, subject: msg.subject }, 'dropped an event that could not be forwarded');
        }
      },
    });
  }

  onModuleDestroy(): void {
    this.subscription?.unsubscribe();
  }
}
