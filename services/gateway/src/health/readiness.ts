import { pingKeyOf, SERVICES } from '@bns/contracts';
import type { KitContext, ReadinessCheck } from '@bns/service-kit';

const PING_TIMEOUT_MS = 2000;

/** The gateway is ready only when every service, and every sessions shard, answers a ping. */
export function servicePings(ctx: Pick<KitContext, 'info' | 'rpc'>): ReadinessCheck[] {
  const checks: ReadinessCheck[] = [];
  for (const service of SERVICES) {
    if (service === 'sessions') {
      for (let shard = 0; shard < ctx.info.shards; shard++) {
        checks.push({ name: `sessions-${shard}`, check: () => ctx.rpc.call('sessions.ping', {}, { shard, timeoutMs: PING_TIMEOUT_MS }) });
      }
    } else {
      checks.push({ name: service, check: () => ctx.rpc.call(pingKeyOf(service), {}, { timeoutMs: PING_TIMEOUT_MS }) });
    }
  }
  return checks;
}
