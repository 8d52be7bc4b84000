import { Inject, Logger, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import { WebSocketGateway, WebSocketServer, type OnGatewayConnection, type OnGatewayInit } from '@nestjs/websockets';
import type { NatsConnection, Subscription } from '@nats-io/transport-node';
import type { Server, Socket } from 'socket.io';
import { EVENTS_WILDCARD, userRoom, type EventKey, type EventEnvelope } from '@bns/contracts';
import { NATS_CONNECTION } from '@bns/service-kit';
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
