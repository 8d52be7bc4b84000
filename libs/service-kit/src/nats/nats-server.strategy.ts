import { AsyncLocalStorage } from 'node:async_hooks';
import { Logger } from '@nestjs/common';
import { ServerNats } from '@nestjs/microservices';
import {
  CommonErrorCode,
  ErrorKind,
  isSharded,
  LIMITS,
  MESSAGES,
  subjectOf,
  type ErrorPayload,
  type RequestKey,
} from '@bns/contracts';
import type { Msg } from '@nats-io/transport-node';
import { NatsContext } from '@nestjs/microservices';
import { NO_MESSAGE_HANDLER } from '@nestjs/microservices/constants.js';
import { outcomeOf, recordRpcServer } from '../metrics/metrics.js';
import { natsTransportOptions } from './connection.js';

const PLAIN_SUBJECT = /^[A-Za-z_$]/;
const JSON_WORDS = new Set(['true', 'false', 'null']);

/** What the caller gets instead of an answer too large for one NATS message. */
const REPLY_TOO_LARGE: ErrorPayload = {
  kind: ErrorKind.PayloadTooLarge,
  code: CommonErrorCode.ReplyTooLarge,
  message: MESSAGES.replyTooLarge,
};

/** nats.js refuses to publish more than the server's max_payload with "'payload' max_payload size exceeded". */
function isOverMaxPayload(err: unknown): boolean {
  return err instanceof Error && err.name === 'InvalidArgumentError' && err.message.includes('max_payload');
}

/** What a caller that gave up gets, should it still listen: nothing was done. */
const REQUEST_EXPIRED: ErrorPayload = {
  kind: ErrorKind.Unavailable,
  code: CommonErrorCode.RequestExpired,
  message: MESSAGES.serviceUnavailable,
};

/** The deadline (epoch ms) of the request being handled, for a handler that checks it before it commits. */
const deadlines = new AsyncLocalStorage<number>();

/**
 * True when the request being handled has outlived its caller's deadline by more than
 * LIMITS.rpcDeadlineGraceMs: its caller answered 503 already, so work not yet committed should not be
 * (a job start stalled by Postgres past the gateway's timeout rolls back instead of starting a job the
 * user was told had not started). False outside a request, or for a request without a deadline.
 */
export function rpcDeadlinePassed(now = Date.now()): boolean {
  const deadline = deadlines.getStore();
  return deadline !== undefined && now > deadline + LIMITS.rpcDeadlineGraceMs;
}

/** Drops seen lately, by subject: logged once a while, never once per request. */
const EXPIRED_LOG_EVERY_MS = 5000;

/**
 * Nest's NATS server, with these changes: handlers registered on a sharded key (`sessions.connect`)
 * listen on their shard's subject (`sessions.<k>.connect`) in the shard's own queue group; requests
 * are timed and counted; a plain subject is routed without a JSON.parse that throws. Everything else
 * (queue groups, wire format, handler lookup) is Nest's.
 */
export class KitNatsServer extends ServerNats {
  private readonly replyLogger = new Logger('KitNatsServer');
  private readonly expiredLoggedAt = new Map<string, number>();

  constructor(
    url: string,
    name: string,
    private readonly queue: string,
    private readonly shard?: number,
  ) {
    super(natsTransportOptions(url, name, queue));
  }

  override bindEvents(client: Parameters<ServerNats['bindEvents']>[0]): void {
    // Nest keeps its subscription list private; graceful close unsubscribes what is in it.
    const subscriptions = (this as unknown as { subscriptions: unknown[] }).subscriptions;
    for (const channel of this.messageHandlers.keys()) {
      const subject = isSharded(channel) ? subjectOf(channel as RequestKey, this.shard) : channel;
      const sub = client.subscribe(subject, {
        queue: this.queue,
        callback: this.getMessageHandler(channel).bind(this),
      });
      subscriptions.push(sub);
    }
  }

  /**
   * Nest's handling of a message, but a request that arrives later than its caller's deadline (plus
   * LIMITS.rpcDeadlineGraceMs) is not handled: the process was stopped, or NATS held the message, and
   * the caller has told its user "try again" already. Acting on it now would send a message a job
   * recorded as failed, one after its job was cancelled, or start a job the user will start again.
   * The handler runs with its deadline at hand (`rpcDeadlinePassed`).
   */
  override async handleMessage(channel: string, natsMsg: Msg): Promise<unknown> {
    const message = (await this.deserializer.deserialize(natsMsg, { channel, replyTo: natsMsg.reply })) as {
      id?: string;
      data?: unknown;
      deadline?: unknown;
    };
    const ctx = new NatsContext([natsMsg.subject, natsMsg.headers]);
    if (message.id === undefined) return this.handleEvent(channel, message as never, ctx);
    const publish = this.getPublisher(natsMsg, message.id, ctx);
    const handler = this.getHandlerByPattern(channel);
    if (!handler) return publish({ id: message.id, status: 'error', err: NO_MESSAGE_HANDLER } as never);
    const run = () =>
      this.handleRequest(ctx, async () => this.transformToObservable(await handler(message.data, ctx)), publish);
    if (typeof message.deadline !== 'number') return run();
    const late = Date.now() - message.deadline;
    if (late > LIMITS.rpcDeadlineGraceMs) {
      this.loggedExpired(natsMsg.subject, late);
      return publish({ err: REQUEST_EXPIRED, isDisposed: true });
    }
    return deadlines.run(message.deadline, run);
  }

  private loggedExpired(subject: string, lateMs: number): void {
    const now = performance.now();
    if (now - (this.expiredLoggedAt.get(subject) ?? -Infinity) < EXPIRED_LOG_EVERY_MS) return;
    this.expiredLoggedAt.set(subject, now);
    this.replyLogger.warn(
      { subject, lateMs },
      'dropped requests that arrived after their caller had given up (not acted on)',
    );
  }

  /**
   * Nest first tries JSON.parse on every request's subject (a pattern may be a JSON object), and a
   * subject such as `sessions.0.send` makes it throw: about 3 µs per request for the error and its
   * stack trace, on every request every service answers. A subject that starts with a
   * letter can only parse as `true`, `false` or `null` (NATS subjects hold no whitespace), so it goes
   * straight to Nest's normalising; anything else goes Nest's way.
   */
  override getRouteFromPattern(pattern: string): string {
    return PLAIN_SUBJECT.test(pattern) && !JSON_WORDS.has(pattern)
      ? this.normalizePattern(pattern)
      : super.getRouteFromPattern(pattern);
  }

  /**
   * Times each request from its arrival to its reply and counts it by subject and outcome. A reply
   * nats.js cannot publish because it is over max_payload would otherwise be lost (Nest only logs the
   * error) and the caller would wait its whole timeout for a 503: it gets a small PayloadTooLarge
   * error at once instead, and the log says which subject (never what the reply held).
   */
  override getPublisher(...args: Parameters<ServerNats['getPublisher']>): ReturnType<ServerNats['getPublisher']> {
    const publish = super.getPublisher(...args);
    const subject = args[0].subject;
    const started = performance.now();
    let counted = false;
    return (response: { err?: unknown; isDisposed?: boolean }) => {
      // Timed up to the publish, as before: the outcome is known only once it went out.
      const seconds = (performance.now() - started) / 1000;
      const count = (err: unknown) => {
        if (counted) return;
        counted = true;
        recordRpcServer(subject, outcomeOf(err), seconds);
      };
      let sent: unknown;
      try {
        sent = publish(response);
      } catch (err) {
        if (!isOverMaxPayload(err)) {
          count(response.err);
          throw err;
        }
        count(REPLY_TOO_LARGE);
        this.replyLogger.warn({ subject }, 'reply over the NATS max_payload: answered with an error instead');
        return publish({ err: REPLY_TOO_LARGE, isDisposed: true });
      }
      count(response.err);
      return sent;
    };
  }
}
