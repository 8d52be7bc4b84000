import { runService } from '@bns/service-kit';
import { SESSIONS_ENV, shardProblems, stateKeyProblems, type SessionsEnv } from './config/env.js';
import { SESSIONS_ENTITIES, SESSIONS_MIGRATIONS } from './database/schema.js';
import { UnhandledRejectionGuard } from './process-guards.js';
import { registerSessionsMetrics } from './metrics/sessions.metrics.js';
import { SessionsModule } from './sessions/sessions.module.js';

// Before anything starts: one user's browser must never take the whole shard down.
new UnhandledRejectionGuard().install();

await runService({
  name: 'sessions',
  env: SESSIONS_ENV,
  defaultPort: 3001,
  natsHandlers: true,
  shard: (env) => env.SHARD_INDEX,
  validate: (env) => [...shardProblems(env as SessionsEnv), ...stateKeyProblems(env as SessionsEnv)],
  database: { schema: 'sessions', entities: SESSIONS_ENTITIES, migrations: SESSIONS_MIGRATIONS },
  module: () => SessionsModule,
  metrics: registerSessionsMetrics,
});
