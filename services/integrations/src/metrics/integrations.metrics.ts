import { Logger } from '@nestjs/common';
import { jetstreamManager } from '@nats-io/jetstream';
import { EVENTS_STREAM } from '@bns/contracts';
import { counter, gauge, histogram, type KitContext, type ServiceEnv } from '@bns/service-kit';
import type { INTEGRATIONS_ENV } from '../config/env.js';

/** Webhook metrics: outcomes, POST latency and event-to-delivery lag. Labels never name a user or endpoint. */
const attempts = counter({
  name: 'bns_webhook_attempts_total',
  help: 'Webhook POST attempts, by outcome (succeeded / failed)',
  labelNames: ['outcome'],
});
const postSeconds = histogram({
  name: 'bns_webhook_post_duration_seconds',
  help: 'Time of one webhook POST, connect to answer',
  buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
});
const lagSeconds = histogram({
  name: 'bns_webhook_delivery_lag_seconds',
  help: 'From the event to the attempt that delivered it (retries included)',
  buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 3600, 86400],
});

export function observeDelivery(ok: boolean, latencyMs: number, lagMs: number): void {
  attempts.inc({ outcome: ok ? 'succeeded' : 'failed' });
  postSeconds.observe(latencyMs / 1000);
  if (ok) lagSeconds.observe(Math.max(0, lagMs) / 1000);
}

/** Registered by main.ts: how far the events consumer is behind, read from JetStream on scrape. */
export function registerIntegrationsMetrics(ctx: KitContext<ServiceEnv<typeof INTEGRATIONS_ENV>>): void {
  const logger = new Logger('IntegrationsMetrics');
  gauge({
    name: 'bns_integrations_events_pending',
    help: 'Events of events.> not yet handed to the webhook fan-out (JetStream num_pending + ack pending)',
    async collect() {
      try {
        const info = await (
          await jetstreamManager(ctx.nc)
        ).consumers.info(EVENTS_STREAM, ctx.env.INTEGRATIONS_CONSUMER);
        this.set(info.num_pending + info.num_ack_pending);
      } catch (err) {
        logger.debug({ err }, 'consumer info unavailable');
      }
    },
  });
}
