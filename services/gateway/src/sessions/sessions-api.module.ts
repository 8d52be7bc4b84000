import { Module } from '@nestjs/common';
import { SessionController } from './session.controller.js';
import { SimulatorController } from './simulator.controller.js';

/** /api/session/cleanup and the dev simulator calls, answered by the user's sessions shard over NATS. */
@Module({ controllers: [SessionController, SimulatorController] })
export class SessionsApiModule {}
