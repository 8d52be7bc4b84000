import { Module } from '@nestjs/common';
import { OutboxPublisher, OutboxRepository } from '@bns/service-kit';
import { engineProvider } from './engines/engine.provider.js';
import { SimOutboxRepository } from './engines/sim-outbox.repository.js';
import { WebjsAuthRepository } from './engines/webjs-auth.repository.js';
import { LinksRepository } from './links.repository.js';
import { MessageEvents } from './message-events.service.js';
import { SendLedger } from './send-ledger.service.js';
import { SendsRepository } from './sends.repository.js';
import { SessionEvents } from './session-events.js';
import { EngineListeners } from './engine-listeners.js';
import { SessionManager } from './session-manager.service.js';
import { SessionsHandler } from './sessions.handler.js';
import { SimulatorControls } from './simulator-controls.service.js';
import { UserSessions } from './user-sessions.js';

@Module({
  controllers: [SessionsHandler],
  providers: [
    engineProvider,
    LinksRepository,
    SendsRepository,
    SimOutboxRepository,
    WebjsAuthRepository,
    OutboxRepository,
    OutboxPublisher,
    SendLedger,
    SessionEvents,
    MessageEvents,
    UserSessions,
    EngineListeners,
    SessionManager,
    SimulatorControls,
  ],
})
export class SessionsModule {}
