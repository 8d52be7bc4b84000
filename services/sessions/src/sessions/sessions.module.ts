import { Module } from '@nestjs/common';
import { engineProvider } from './engines/engine.provider.js';
import { LinksRepository } from './links.repository.js';
import { SendLedger } from './send-ledger.service.js';
import { SessionEvents } from './session-events.js';
import { SessionManager } from './session-manager.service.js';
import { SessionsHandler } from './sessions.handler.js';

@Module({
  controllers: [SessionsHandler],
  providers: [engineProvider, LinksRepository, SendLedger, SessionEvents, SessionManager],
})
export class SessionsModule {}
