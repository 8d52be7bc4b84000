import { pingKeyOf, SERVICES } from '@bns/contracts';
import type { KitContext, ReadinessCheck } from '@bns/service-kit';

const PING_TIMEOUT_MS = 2000;

/**
 * The gateway is ready only when every service, and every sessions shard, answers a ping. The public
 * /readyz says which answered, not what they answered: a ping's reply names the instance (host and
 * pid) and its version, which are nobody's business outside the cluster.
 */
export function servicePings(ctx: Pick<KitContext, 'info' | 'rpc'>): ReadinessCheck[] {
  const checks: ReadinessCheck[] = [];
  for (const service of SERVICES) {
    if (service === 'sessions') {
      for (let shard = 0; shard < ctx.info.shards; shard++) {
        checks.push({
          name: `sessions-${shard}`,
          check: async () => void (await ctx.rpc.call('sessions.ping', {}, { shard, timeoutMs: PING_TIMEOUT_MS })),
        });
      }
    } else {
      checks.push({
        name: service,
        check: async () => void (await ctx.rpc.call(pingKeyOf(service), {}, { timeoutMs: PING_TIMEOUT_MS })),
      });
    }
  }
  return checks;
}
