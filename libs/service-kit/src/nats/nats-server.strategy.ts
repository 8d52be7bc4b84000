import { ServerNats } from '@nestjs/microservices';
import { isSharded, subjectOf, type RequestKey } from '@bns/contracts';
import { outcomeOf, recordRpcServer } from '../metrics/metrics.js';
import { natsTransportOptions } from './connection.js';

const PLAIN_SUBJECT = /^[A-Za-z_$]/;
const JSON_WORDS = new Set(['true', 'false', 'null']);

/**
 * Nest's NATS server, with these changes: handlers registered on a sharded key (`sessions.connect`)
 * listen on their shard's subject (`sessions.<k>.connect`) in the shard's own queue group; requests
 * are timed and counted; a plain subject is routed without a JSON.parse that throws. Everything else
 * (queue groups, wire format, handler lookup) is Nest's.
 */
export class KitNatsServer extends ServerNats {
  constructor(url: string, name: string, private readonly queue: string, private readonly shard?: number) {
    super(natsTransportOptions(url, name, queue));
  }

  override bindEvents(client: Parameters<ServerNats['bindEvents']>[0]): void {
    // Nest keeps its subscription list private; graceful close unsubscribes what is in it.
    const subscriptions = (this as unknown as { subscriptions: unknown[] }).subscriptions;
    for (const channel of this.messageHandlers.keys()) {
      const subject = isSharded(channel) ? subjectOf(channel as RequestKey, this.shard) : channel;
      const sub = client.subscribe(subject, { queue: this.queue, callback: this.getMessageHandler(channel).bind(this) });
      subscriptions.push(sub);
    }
  }

  /**
   * Nest first tries JSON.parse on every request's subject (a pattern may be a JSON object), and a
   * subject such as `sessions.0.send` makes it throw: about 3 µs per request for the error and its
   * stack trace, on every request every service answers (issue 17). A subject that starts with a
   * letter can only parse as `true`, `false` or `null` (NATS subjects hold no whitespace), so it goes
   * straight to Nest's normalising; anything else goes Nest's way.
   */
  override getRouteFromPattern(pattern: string): string {
    return PLAIN_SUBJECT.test(pattern) && !JSON_WORDS.has(pattern) ? this.normalizePattern(pattern) : super.getRouteFromPattern(pattern);
  }

  /** Times each request from its arrival to its reply and counts it by subject and outcome. */
  override getPublisher(...args: Parameters<ServerNats['getPublisher']>): ReturnType<ServerNats['getPublisher']> {
    const publish = super.getPublisher(...args);
    const subject = args[0].subject;
    const started = performance.now();
    let counted = false;
    return (response: { err?: unknown }) => {
      if (!counted) {
        counted = true;
        recordRpcServer(subject, outcomeOf(response.err), (performance.now() - started) / 1000);
      }
      return publish(response);
    };
  }
}
