import { Module } from '@nestjs/common';
import { shardOf } from '@bns/contracts';
import { accountDataProviders, OutboxPublisher, OutboxRepository, UserDeletionsModule } from '@bns/service-kit';
import { SessionsAccountData } from '../account/sessions-account-data.js';
import { engineProvider, stateKeysProvider } from './engines/engine.provider.js';
import { SimAuthRepository } from './engines/sim-auth.repository.js';
import { SessionStateSeal } from './state-seal.js';
import { SimOutboxRepository } from './engines/sim-outbox.repository.js';
import { WebjsAuthRepository } from './engines/webjs-auth.repository.js';
import { LinksRepository } from './links.repository.js';
import { MessageEvents } from './message-events.service.js';
import { MediaCache } from './media-cache.js';
import { SendLedger } from './send-ledger.service.js';
import { SendsRepository } from './sends.repository.js';
import { LidsRepository } from './lids.repository.js';
import { SessionEvents } from './session-events.js';
import { EngineListeners } from './engine-listeners.js';
import { SessionManager } from './session-manager.service.js';
import { SessionsHandler } from './sessions.handler.js';
import { SimulatorControls } from './simulator-controls.service.js';
import { UserSessions } from './user-sessions.js';

@Module({
  imports: [UserDeletionsModule],
  controllers: [SessionsHandler],
  providers: [
    stateKeysProvider,
    engineProvider,
    SimAuthRepository,
    SessionStateSeal,
    LinksRepository,
    SendsRepository,
    LidsRepository,
    SimOutboxRepository,
    WebjsAuthRepository,
    OutboxRepository,
    OutboxPublisher,
    SendLedger,
    MediaCache,
    SessionEvents,
    MessageEvents,
    UserSessions,
    EngineListeners,
    SessionManager,
    SimulatorControls,
    // Every shard hears each deletion; the user's own shard acts on it.
    ...accountDataProviders('sessions', SessionsAccountData, {
      owns: (userId, info) => shardOf(userId, info.shards) === info.shard,
    }),
  ],
})
export class SessionsModule {}
