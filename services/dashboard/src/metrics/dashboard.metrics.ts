import type { DASHBOARD_ENV } from '../config/env.js';
import { Logger } from '@nestjs/common';
import { jetstreamManager } from '@nats-io/jetstream';
import { EVENTS_STREAM } from '@bns/contracts';
import { counter, gauge, histogram, type KitContext, type ServiceEnv } from '@bns/service-kit';

/**
 * The dashboard's own metrics: what the projection applied (one hook around each applied batch) and
 * how far its durable consumers are behind, asked of JetStream on scrape. Labels are subjects and
 * consumer names, never a user.
 */
const applied = counter({
  name: 'bns_dashboard_events_applied_total',
  help: 'Events applied to the read model, by subject',
  labelNames: ['subject'],
});
const batchSeconds = histogram({
  name: 'bns_dashboard_apply_batch_duration_seconds',
  help: 'Time to apply one batch of events in one database transaction',
  buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
});
const batchSize = histogram({
  name: 'bns_dashboard_apply_batch_size',
  help: 'Events per applied batch',
  buckets: [1, 2, 5, 10, 25, 50, 100, 250, 500, 1000],
});

/** Hook: applies one batch through `apply`, timing it and counting its events by subject on success. */
export async function observeBatch<T>(subjects: readonly string[], apply: () => Promise<T>): Promise<T> {
  const end = batchSeconds.startTimer();
  const result = await apply();
  end();
  batchSize.observe(subjects.length);
  const bySubject = new Map<string, number>();
  for (const s of subjects) bySubject.set(s, (bySubject.get(s) ?? 0) + 1);
  for (const [subject, n] of bySubject) applied.inc({ subject: subject.startsWith('events.') ? subject : 'other' }, n);
  return result;
}

/** Registered by main.ts: consumer lag read from JetStream on scrape. */
export function registerDashboardMetrics(ctx: KitContext<ServiceEnv<typeof DASHBOARD_ENV>>): void {
  const logger = new Logger('DashboardMetrics');
  const prefix = `${ctx.env.DASHBOARD_CONSUMER}-`;
  const lag = async (): Promise<Array<{ consumer: string; pending: number; ackPending: number }>> => {
    const jsm = await jetstreamManager(ctx.nc);
    const out = [];
    for await (const c of jsm.consumers.list(EVENTS_STREAM)) {
      if (c.name.startsWith(prefix))
        out.push({ consumer: c.name, pending: c.num_pending, ackPending: c.num_ack_pending });
    }
    return out;
  };
  gauge({
    name: 'bns_dashboard_consumer_pending',
    help: 'Events in JetStream not yet delivered to the read model, per durable consumer (its lag)',
    labelNames: ['consumer'],
    async collect() {
      try {
        for (const c of await lag()) this.set({ consumer: c.consumer }, c.pending);
      } catch (err) {
        logger.warn({ err }, 'could not read the consumer lag for /metrics');
      }
    },
  });
  gauge({
    name: 'bns_dashboard_consumer_ack_pending',
    help: 'Events delivered to the read model but not yet acknowledged, per durable consumer',
    labelNames: ['consumer'],
    async collect() {
      try {
        for (const c of await lag()) this.set({ consumer: c.consumer }, c.ackPending);
      } catch (err) {
        logger.warn({ err }, 'could not read the consumer ack backlog for /metrics');
      }
    },
  });
}
