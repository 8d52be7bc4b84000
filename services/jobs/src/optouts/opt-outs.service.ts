import { Inject, Injectable, Logger } from '@nestjs/common';
import type { NatsConnection } from '@nats-io/transport-node';
import {
  checkOptOutNumbers,
  firstIssue,
  isOptOutKeyword,
  normalizeHkPhone,
  OPT_OUT_LIMITS,
  OPT_OUT_MESSAGES,
  OPTED_OUT_SUBJECT,
  type OptedOutNotice,
  optOutConfirmationKey,
  optOutPhoneOf,
  optOutSchemas,
  OptOutsErrorCode,
  type MessageReceivedEvent,
  type ReplyOf,
  type RequestOf,
} from '@bns/contracts';
import { AppError, NATS_CONNECTION, RpcClient, SERVICE_ENV, Transactions } from '@bns/service-kit';
import { LaneStepRepository } from '../queue/lane-step.repository.js';
import { decodeCursor, encodeCursor, OptOutsRepository, type ListCursor } from './opt-outs.repository.js';
import type { OptOutsEnv } from './opt-outs.env.js';

/** What an inbound message did, for the consumer's (number-free) log and the tests. */
export type InboundOutcome = 'not_a_keyword' | 'not_a_recipient' | 'opted_out' | 'already_opted_out';

/**
 * The opt-out list of each account: what the user does with it (list, add, remove, export, keyword
 * settings) and what inbound messages do to it. Every statement is a repository's; a refusal is a
 * typed validation error with the text of contracts.
 */
@Injectable()
export class OptOutsService {
  private readonly logger = new Logger('OptOutsService');

  constructor(
    private readonly tx: Transactions,
    private readonly optOuts: OptOutsRepository,
    private readonly steps: LaneStepRepository,
    private readonly rpc: RpcClient,
    @Inject(NATS_CONNECTION) private readonly nc: NatsConnection,
    @Inject(SERVICE_ENV) private readonly env: OptOutsEnv,
  ) {}

  async list(req: RequestOf<'jobs.optouts.list'>): Promise<ReplyOf<'jobs.optouts.list'>> {
    const parsed = optOutSchemas().listQuery.safeParse({
      cursor: req.cursor || undefined,
      limit: req.limit ?? undefined,
      q: req.q || undefined,
    });
    if (!parsed.success)
      throw AppError.validation(OptOutsErrorCode.InvalidQuery, firstIssue(parsed.error, OPT_OUT_MESSAGES.invalidLimit));
    const cursor = this.cursorOf(parsed.data.cursor);
    const em = this.tx.manager;
    const [page, total] = await Promise.all([
      this.optOuts.list(em, req.userId, {
        cursor,
        limit: parsed.data.limit ?? OPT_OUT_LIMITS.listPageDefault,
        search: parsed.data.q,
      }),
      this.optOuts.count(em, req.userId),
    ]);
    return { optOuts: page.optOuts, nextCursor: page.next ? encodeCursor(page.next) : null, total };
  }

  /** One page of the whole list for the CSV the gateway streams. */
  async exportPage(req: RequestOf<'jobs.optouts.export'>): Promise<ReplyOf<'jobs.optouts.export'>> {
    const page = await this.optOuts.list(this.tx.manager, req.userId, {
      cursor: this.cursorOf(req.cursor || undefined),
      limit: OPT_OUT_LIMITS.exportPage,
    });
    return { optOuts: page.optOuts, nextCursor: page.next ? encodeCursor(page.next) : null };
  }

  /** Manual add or import: reason `manual`; numbers already listed keep their reason and time. */
  async add(req: RequestOf<'jobs.optouts.add'>): Promise<ReplyOf<'jobs.optouts.add'>> {
    const check = checkOptOutNumbers(req.phoneNumbers);
    if (!check.ok) throw AppError.validation(check.code, check.message, undefined, check.details);
    const added = await this.optOuts.add(this.tx.manager, req.userId, check.phones, 'manual');
    this.announce(req.userId, added);
    return { added: added.length, alreadyListed: check.phones.length - added.length };
  }

  async remove(req: RequestOf<'jobs.optouts.remove'>): Promise<ReplyOf<'jobs.optouts.remove'>> {
    const phone = normalizeHkPhone(req.phone);
    if (phone === undefined) {
      throw AppError.validation(
        OptOutsErrorCode.InvalidPhoneNumbers,
        OPT_OUT_MESSAGES.invalidPhoneNumbers([String(req.phone ?? '').slice(0, 32)]),
      );
    }
    if (!(await this.optOuts.remove(this.tx.manager, req.userId, phone)))
      throw AppError.notFound(OptOutsErrorCode.NotListed, OPT_OUT_MESSAGES.notListed);
    return { removed: true };
  }

  /** Which of a job's numbers would be skipped (the review step asks before the start). */
  async check(req: RequestOf<'jobs.optouts.check'>): Promise<ReplyOf<'jobs.optouts.check'>> {
    const check = checkOptOutNumbers(req.phoneNumbers, OPT_OUT_LIMITS.checkMax);
    if (!check.ok) throw AppError.validation(check.code, check.message, undefined, check.details);
    // The sender's own rule, so the review says exactly what the start will skip.
    const suppressed = await this.steps.suppressedAmong(
      this.tx.manager,
      req.userId,
      check.phones,
      this.env.NOT_ON_WHATSAPP_MEMORY_DAYS,
    );
    const optedOut: string[] = [];
    const notOnWhatsApp: string[] = [];
    for (const phone of check.phones) {
      const reason = suppressed.get(phone);
      if (reason === 'opted_out') optedOut.push(phone);
      else if (reason === 'not_on_whatsapp') notOnWhatsApp.push(phone);
    }
    return { optedOut, notOnWhatsApp };
  }

  getSettings(req: RequestOf<'jobs.optouts.settings.get'>): Promise<ReplyOf<'jobs.optouts.settings.get'>> {
    return this.optOuts.settings(this.tx.manager, req.userId);
  }

  /** A partial update: the fields sent are checked, merged with the stored ones and checked again as a whole. */
  async setSettings(req: RequestOf<'jobs.optouts.settings.set'>): Promise<ReplyOf<'jobs.optouts.settings.set'>> {
    const body = req.settings;
    if (typeof body !== 'object' || body === null || Array.isArray(body)) {
      throw AppError.validation(OptOutsErrorCode.InvalidSettings, OPT_OUT_MESSAGES.settingsNotAnObject);
    }
    const patch = optOutSchemas().settingsPatch.safeParse(body);
    if (!patch.success)
      throw AppError.validation(
        OptOutsErrorCode.InvalidSettings,
        firstIssue(patch.error, OPT_OUT_MESSAGES.settingsNotAnObject),
      );
    return this.tx.run(async (em) => {
      await this.optOuts.lockSettings(em, req.userId);
      const current = await this.optOuts.settings(em, req.userId);
      const merged = optOutSchemas().settings.safeParse({ ...current, ...patch.data });
      if (!merged.success)
        throw AppError.validation(
          OptOutsErrorCode.InvalidSettings,
          firstIssue(merged.error, OPT_OUT_MESSAGES.settingsNotAnObject),
        );
      // The same word twice is one keyword.
      const keywords = [
        ...new Map(merged.data.keywords.map((k) => [k.normalize('NFKC').toLocaleUpperCase('en-US'), k])).values(),
      ];
      return this.optOuts.saveSettings(em, req.userId, { ...merged.data, keywords });
    });
  }

  /**
   * An inbound message: a keyword puts its sender on the list (reason `keyword`). Safe to run again for
   * the same event (a redelivery): the number is listed once, and the confirmation reply, sent only for
   * the event that listed it, carries a key the sessions service answers once.
   */
  async handleInbound(event: MessageReceivedEvent): Promise<InboundOutcome> {
    const phone = optOutPhoneOf(event.from);
    const outcome = await this.tx.run(async (em): Promise<{ outcome: InboundOutcome; confirm?: { text: string } }> => {
      if (phone === undefined) return { outcome: 'not_a_recipient' };
      // It wrote to us, so it is on WhatsApp whatever a send once said.
      await this.optOuts.forgetNotOnWhatsApp(em, event.userId, phone);
      const settings = await this.optOuts.settings(em, event.userId);
      if (!isOptOutKeyword(event.text, settings.keywords)) return { outcome: 'not_a_keyword' };
      await this.optOuts.add(em, event.userId, [phone], 'keyword', event.eventId);
      const listedBy = await this.optOuts.sourceEventOf(em, event.userId, phone);
      if (listedBy !== event.eventId) return { outcome: 'already_opted_out' };
      return {
        outcome: 'opted_out',
        ...(settings.confirmationEnabled ? { confirm: { text: settings.confirmationText } } : {}),
      };
    });
    if (outcome.outcome === 'opted_out' && phone !== undefined) this.announce(event.userId, [phone]);
    if (outcome.confirm && phone !== undefined) await this.confirm(event, phone, outcome.confirm.text);
    return outcome.outcome;
  }

  /**
   * Numbers just put on the list (committed): every jobs replica withholds a send to them that it
   * prepared ahead of its slot. Best effort (core NATS): a replica that misses it sends that one
   * message at most JOBS_SEND_LEAD_MS after the opt-out; every later take skips the number anyway.
   */
  private announce(userId: string, phones: string[]): void {
    if (phones.length === 0) return;
    try {
      this.nc.publish(OPTED_OUT_SUBJECT, JSON.stringify({ userId, phones } satisfies OptedOutNotice));
    } catch (err) {
      this.logger.warn({ userId, err: AppError.fromUnknown(err).code }, 'opt-out notice not published');
    }
  }

  /** The optional reply; a failure is logged (without the number) and not retried: the opt-out itself stands. */
  private async confirm(event: MessageReceivedEvent, phone: string, text: string): Promise<void> {
    try {
      await this.rpc.call('sessions.send', {
        userId: event.userId,
        to: phone,
        text,
        idempotencyKey: optOutConfirmationKey(event.eventId, phone),
      });
    } catch (err) {
      const error = AppError.fromUnknown(err);
      this.logger.warn(
        { userId: event.userId, eventId: event.eventId, code: error.code },
        'opt-out confirmation reply not sent',
      );
    }
  }

  private cursorOf(text: string | undefined): ListCursor | undefined {
    if (text === undefined) return undefined;
    const cursor = decodeCursor(text);
    if (!cursor) throw AppError.validation(OptOutsErrorCode.InvalidQuery, OPT_OUT_MESSAGES.invalidCursor);
    return cursor;
  }
}
