import { env, type EnvOf } from '@bns/service-kit';

export const SESSIONS_ENV = {
  SHARD_INDEX: env.int('which sessions shard this replica is, 0 ≤ SHARD_INDEX < SESSIONS_SHARDS (the StatefulSet ordinal)', 0, { min: 0 }),
};
export type SessionsEnv = EnvOf<typeof SESSIONS_ENV> & { SESSIONS_SHARDS: number };

export function shardProblems(env: SessionsEnv): string[] {
  return env.SHARD_INDEX < env.SESSIONS_SHARDS ? [] : [`SHARD_INDEX must be < SESSIONS_SHARDS (${env.SESSIONS_SHARDS}), got ${env.SHARD_INDEX}`];
}
