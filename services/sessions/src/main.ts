import { runService } from '@bns/service-kit';
import { SESSIONS_ENV, shardProblems, type SessionsEnv } from './config/env.js';
import { CreateSessions1763769600000 } from './database/migrations/1763769600000-create-sessions.js';
import { SessionsModule } from './sessions/sessions.module.js';

await runService({
  name: 'sessions',
  env: SESSIONS_ENV,
  defaultPort: 3001,
  natsHandlers: true,
  shard: (env) => env.SHARD_INDEX,
  validate: (env) => shardProblems(env as SessionsEnv),
  database: { schema: 'sessions', entities: [], migrations: [CreateSessions1763769600000] },
  module: () => SessionsModule,
});
