import { connect, type NatsConnection } from '@nats-io/transport-node';

/** One NATS connection per process, reconnecting forever: a broker restart must not kill a service. */
export function connectNats(url: string, name: string): Promise<NatsConnection> {
  return connect({
    servers: url.split(','),
    name,
    maxReconnectAttempts: -1,
    reconnectTimeWait: 1000,
    pingInterval: 10_000,
    // nats.js otherwise captures an Error (a stack trace) for every request and subscription callback,
    // only to enrich timeout messages; on the gateway's hot path that was ~6% of its CPU.
    noAsyncTraces: true,
  });
}

/** Options for Nest's NATS microservice transport (same server, queue group per service or shard). */
export function natsTransportOptions(url: string, name: string, queue: string) {
  return {
    servers: url.split(','),
    name,
    queue,
    maxReconnectAttempts: -1,
    reconnectTimeWait: 1000,
    noAsyncTraces: true,
  };
}
