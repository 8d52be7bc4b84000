import { headers, type NatsConnection } from '@nats-io/transport-node';
import { jetstreamManager, RetentionPolicy, StorageType } from '@nats-io/jetstream';
import {
  EVENTS_STREAM,
  EVENTS_WILDCARD,
  publish as typedPublish,
  type EventEnvelope,
  type EventKey,
  type EventOf,
  type EventTransport,
} from '@bns/contracts';
import { injectTraceHeaders } from '../telemetry/telemetry.js';
import { isRpcDisconnected, RpcClient } from './rpc-client.js';

/** How long a publish waits for JetStream's ack, and for a lost connection to come back (nats.js's JetStream default). */
const PUBLISH_TIMEOUT_MS = 5000;

/** JetStream's answer to a publish (an event, a KV write): where the message was stored, or why it was not. */
export interface PubAck {
  stream?: string;
  seq?: number;
  duplicate?: boolean;
  error?: { code?: number; err_code?: number; description?: string };
}

const SECOND_NS = 1_000_000_000;

/** Creates the EVENTS stream when it is missing. Safe when several processes race to do it. */
export async function ensureEventsStream(nc: NatsConnection, maxAgeDays = 30): Promise<void> {
  const jsm = await jetstreamManager(nc);
  try {
    await jsm.streams.info(EVENTS_STREAM);
    return;
  } catch {
    // not there yet
  }
  try {
    await jsm.streams.add({
      name: EVENTS_STREAM,
      subjects: [EVENTS_WILDCARD],
      storage: StorageType.File,
      retention: RetentionPolicy.Limits,
      max_age: maxAgeDays * 24 * 3600 * SECOND_NS,
      // Publishers set Nats-Msg-Id = eventId, so a retried publish inside this window is stored once.
      duplicate_window: 120 * SECOND_NS,
    });
  } catch (err) {
    await jsm.streams.info(EVENTS_STREAM).catch(() => {
      throw err;
    });
  }
}

/**
 * Publishes events to JetStream; the event id doubles as the JetStream message id for dedupe.
 *
 * A publish is the request JetStream's client would make (the event on its subject, `Nats-Msg-Id`,
 * the ack on a reply subject), sent through the RpcClient's shared inbox (`requestMessage`): nats.js's
 * own `publish` allocated an Error with a stack trace for every publish it resolved (3% of
 * the jobs service's CPU at full speed). While the connection is down, a publish waits for it to come
 * back (up to PUBLISH_TIMEOUT_MS); one whose connection dropped before the ack came is made once more
 * when it is back, stored once (same message id). What still fails stays in the outbox for its sweeper.
 */
export class EventBus implements EventTransport {
  private readonly rpc: RpcClient;

  constructor(
    private readonly nc: NatsConnection,
    rpc?: RpcClient,
  ) {
    this.rpc = rpc ?? new RpcClient(nc, { shards: 1, timeoutMs: PUBLISH_TIMEOUT_MS });
  }

  emit<K extends EventKey>(key: K, event: EventOf<K>): Promise<void> {
    return typedPublish(this, key, event);
  }

  async publish(subject: EventKey, event: EventEnvelope): Promise<void> {
    const hdrs = headers();
    hdrs.set('Nats-Msg-Id', event.eventId);
    injectTraceHeaders(hdrs);
    const body = JSON.stringify(event);
    // A closed connection (the process is stopping) never comes back: no waiting for it.
    if (this.nc.isClosed()) throw new Error('the NATS connection is closed');
    let ack: PubAck | undefined;
    for (let attempt = 1; !ack; attempt++) {
      try {
        await this.rpc.whenConnected(PUBLISH_TIMEOUT_MS);
        ack = (
          await this.rpc.requestMessage(subject, body, { headers: hdrs, timeoutMs: PUBLISH_TIMEOUT_MS })
        ).json<PubAck>();
      } catch (err) {
        if (attempt === 1 && isRpcDisconnected(err)) continue;
        throw err;
      }
    }
    if (ack.error || typeof ack.seq !== 'number' || ack.seq < 1) {
      throw new Error(`JetStream did not store the event: ${ack.error?.description ?? 'no ack'}`);
    }
  }
}
