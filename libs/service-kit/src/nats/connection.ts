import { connect, type NatsConnection } from '@nats-io/transport-node';

/** One NATS connection per process, reconnecting forever: a broker restart must not kill a service. */
export function connectNats(url: string, name: string): Promise<NatsConnection> {
  return connect({
    servers: url.split(','),
    name,
    maxReconnectAttempts: -1,
    reconnectTimeWait: 1000,
    pingInterval: 10_000,
  });
}

/** Options for Nest's NATS microservice transport (same server, queue group per service or shard). */
export function natsTransportOptions(url: string, name: string, queue: string) {
  return { servers: url.split(','), name, queue, maxReconnectAttempts: -1, reconnectTimeWait: 1000 };
}
