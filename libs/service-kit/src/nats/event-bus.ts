import { headers, type NatsConnection } from '@nats-io/transport-node';
import { jetstream, jetstreamManager, RetentionPolicy, StorageType, type JetStreamClient } from '@nats-io/jetstream';
import { EVENTS_STREAM, EVENTS_WILDCARD, publish as typedPublish, type EventEnvelope, type EventKey, type EventOf, type EventTransport } from '@bns/contracts';
import { injectTraceHeaders } from '../telemetry/telemetry.js';

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

/** Publishes events to JetStream; the event id doubles as the JetStream message id for dedupe. */
export class EventBus implements EventTransport {
  private readonly js: JetStreamClient;

  constructor(nc: NatsConnection) {
    this.js = jetstream(nc);
  }

  emit<K extends EventKey>(key: K, event: EventOf<K>): Promise<void> {
    return typedPublish(this, key, event);
  }

  async publish(subject: EventKey, event: EventEnvelope): Promise<void> {
    const hdrs = headers();
    injectTraceHeaders(hdrs);
    await this.js.publish(subject, JSON.stringify(event), { msgID: event.eventId, headers: hdrs });
  }
}
