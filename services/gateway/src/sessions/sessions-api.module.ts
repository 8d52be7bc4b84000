import { Module, type DynamicModule } from '@nestjs/common';
import { devRoutesEnabled, type GatewayEnv } from '../config/env.js';
import { SessionController } from './session.controller.js';
import { SessionsApi, SimulatorApi } from './sessions.api.js';
import { SimulatorController } from './simulator.controller.js';

/**
 * /api/session/cleanup, answered by the user's sessions shard over NATS, and the dev simulator calls,
 * which exist only for local runs (dev sign-in + simulated engine): anywhere else they are 404.
 */
@Module({})
export class SessionsApiModule {
  static forRoot(env: GatewayEnv): DynamicModule {
    const dev = devRoutesEnabled(env);
    return {
      module: SessionsApiModule,
      controllers: [SessionController, ...(dev ? [SimulatorController] : [])],
      providers: [SessionsApi, ...(dev ? [SimulatorApi] : [])],
    };
  }
}
