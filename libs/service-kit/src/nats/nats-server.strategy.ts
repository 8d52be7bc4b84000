import { ServerNats } from '@nestjs/microservices';
import { isSharded, subjectOf, type RequestKey } from '@bns/contracts';
import { outcomeOf, recordRpcServer } from '../metrics/metrics.js';
import { natsTransportOptions } from './connection.js';

/**
 * Nest's NATS server, with one change: handlers registered on a sharded key (`sessions.connect`) listen
 * on their shard's subject (`sessions.<k>.connect`) in the shard's own queue group. Everything else
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
