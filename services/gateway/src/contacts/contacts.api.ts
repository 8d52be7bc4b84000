import { Inject, Injectable } from '@nestjs/common';
import type { Response } from 'express';
import type { NatsConnection } from '@nats-io/transport-node';
import {
  applyFallbacks,
  CONTACT_CSV_HEADER,
  CONTACT_EXPORT_COLUMNS,
  contactCells,
  contactCsvLine,
  CONTACT_MESSAGES,
  CONTACTS_LIMITS,
  ContactsErrorCode,
  type ConversationAnswerSchema,
  conversationPhoneOf,
  type Infer,
  STAGED_IMPORTS_BUCKET,
  type SegmentRecipient,
} from '@bns/contracts';
import { AppError, NATS_CONNECTION, RpcClient, xlsxSheetWriter, zoned } from '@bns/service-kit';
import { StagedBodies } from '../http/staged-bodies.js';
import { JobStarter } from '../jobs/job-starter.js';

const given = (v: unknown) => Array.isArray(v) && v.length > 0;

/** An import (or a segment's recipient list) can take a while on a busy database. */
const LONG_TIMEOUT_MS = 60_000;

/** The contact book, segments and inbox, owned by the contacts service (which checks every body again). */
@Injectable()
export class ContactsApi {
  private readonly staged: StagedBodies;

  constructor(
    private readonly rpc: RpcClient,
    private readonly starter: JobStarter,
    @Inject(NATS_CONNECTION) nc: NatsConnection,
  ) {
    this.staged = new StagedBodies(nc, STAGED_IMPORTS_BUCKET, CONTACTS_LIMITS.stagedTtlMs);
  }

  list(userId: string, query: unknown) {
    return this.rpc.call('contacts.list', { userId, query });
  }

  create(userId: string, body: unknown) {
    return this.rpc.call('contacts.create', { userId, body, source: 'api' });
  }

  get(userId: string, contactId: string) {
    return this.rpc.call('contacts.get', { userId, contactId });
  }

  bulk(userId: string, body: unknown) {
    return this.rpc.call('contacts.bulk', { userId, body }, { timeoutMs: LONG_TIMEOUT_MS });
  }

  mark(userId: string, phone: string, unread: boolean) {
    return this.rpc.call('contacts.conversations.mark', { userId, phone, unread });
  }

  update(userId: string, contactId: string, body: unknown) {
    return this.rpc.call('contacts.update', { userId, contactId, body });
  }

  async remove(userId: string, contactId: string) {
    await this.rpc.call('contacts.delete', { userId, contactId });
    return { success: true };
  }

  /** A body too big for one NATS message is staged in the object store; the service reads it once. */
  async import(userId: string, body: unknown) {
    const text = JSON.stringify(body ?? null);
    const request =
      Buffer.byteLength(text) > CONTACTS_LIMITS.stageAboveBytes
        ? { userId, staged: await this.staged.put(text) }
        : { userId, body };
    return this.rpc.call('contacts.import', request, { timeoutMs: LONG_TIMEOUT_MS });
  }

  /**
   * The book (or the part a search and tag select) as CSV, a page at a time as it is read, formulas
   * neutralised. Headers go out with the first page, so a refusal of the query is still a JSON 400.
   */
  async export(
    userId: string,
    query: { q?: string; tag?: string; segmentId?: string },
    res: Response,
    format: 'csv' | 'xlsx' = 'csv',
    tz = 'UTC',
  ): Promise<void> {
    const page = (cursor?: string) =>
      this.rpc.call('contacts.list', {
        userId,
        query: { ...query, limit: String(CONTACTS_LIMITS.listPageMax), ...(cursor ? { cursor } : {}) },
      });
    let current = await page();
    res.status(200);
    if (format === 'xlsx') {
      const at = zoned(tz);
      const sheet = xlsxSheetWriter({
        header: CONTACT_EXPORT_COLUMNS,
        sheetName: 'Contacts',
        widths: [12, 20, 20, 30, 10, 20, 20, 20],
        localMs: (ms) => at(ms).local,
      });
      res.setHeader('Content-Type', 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet');
      res.setHeader('Content-Disposition', 'attachment; filename="contacts.xlsx"');
      for (const chunk of sheet.start()) res.write(chunk);
      for (;;) {
        for (const chunk of sheet.rows(current.contacts.map(contactCells))) res.write(chunk);
        if (!current.nextCursor) break;
        current = await page(current.nextCursor);
      }
      for (const chunk of sheet.end()) res.write(chunk);
      res.end();
      return;
    }
    res.setHeader('Content-Type', 'text/csv; charset=utf-8');
    res.setHeader('Content-Disposition', 'attachment; filename="contacts.csv"');
    res.write(`\uFEFF${CONTACT_CSV_HEADER}\r\n`);
    for (;;) {
      if (current.contacts.length > 0) res.write(current.contacts.map((c) => `${contactCsvLine(c)}\r\n`).join(''));
      if (!current.nextCursor) break;
      current = await page(current.nextCursor);
    }
    res.end();
  }

  settings(userId: string) {
    return this.rpc.call('contacts.settings.get', { userId });
  }

  setSettings(userId: string, saveRecipients: boolean) {
    return this.rpc.call('contacts.settings.set', { userId, saveRecipients });
  }

  createSegment(userId: string, body: unknown) {
    return this.rpc.call('contacts.segments.create', { userId, body });
  }

  preview(userId: string, body: unknown) {
    return this.rpc.call('contacts.segments.preview', { userId, body }, { timeoutMs: LONG_TIMEOUT_MS });
  }

  segments(userId: string) {
    return this.rpc.call('contacts.segments.list', { userId });
  }

  async removeSegment(userId: string, segmentId: string) {
    await this.rpc.call('contacts.segments.delete', { userId, segmentId });
    return { success: true };
  }

  count(userId: string, segmentId: string) {
    return this.rpc.call('contacts.segments.count', { userId, segmentId });
  }

  /**
   * A start's body before it is checked: a `segmentId` is replaced by the segment's recipients as they
   * are now (each with the contact's name and fields as variables), and `{{var|fallback}}` placeholders
   * become `{{var}}` with the fallback as the value of every recipient that has none. The jobs service
   * then checks and starts the job as any other (opt-outs and not-on-WhatsApp numbers skipped).
   */
  async resolveStart(userId: string, body: Record<string, unknown>): Promise<Record<string, unknown>> {
    const rewritten: Record<string, unknown> = { ...body };
    if (body.segmentId !== undefined && body.segmentId !== null) {
      if (given(body.phoneNumbers) || given(body.recipients))
        throw AppError.validation(ContactsErrorCode.InvalidSegment, CONTACT_MESSAGES.segmentAndNumbers);
      if (typeof body.segmentId !== 'string')
        throw AppError.notFound(ContactsErrorCode.SegmentNotFound, CONTACT_MESSAGES.segmentNotFound);
      rewritten.recipients = await this.segmentRecipients(userId, body.segmentId);
      delete rewritten.phoneNumbers;
    }
    delete rewritten.segmentId;
    if (typeof body.message === 'string') {
      const filled = applyFallbacks(body.message, rewritten);
      rewritten.message = filled.message;
      if (filled.recipients) {
        rewritten.recipients = filled.recipients;
        delete rewritten.phoneNumbers;
      }
    }
    return rewritten;
  }

  /** One page of the segment's recipients for the web's "Choose contacts"; `asOf` fixes who belongs across pages. */
  async membersPage(userId: string, segmentId: string, cursor: unknown, asOf: unknown) {
    const refuse = () => AppError.validation(ContactsErrorCode.InvalidSegment, CONTACT_MESSAGES.cursorInvalid);
    const from =
      typeof asOf === 'string' && asOf.length <= 64 ? Date.parse(asOf) : asOf === undefined ? Date.now() : NaN;
    if (Number.isNaN(from)) throw refuse();
    if (cursor !== undefined && typeof cursor !== 'string') throw refuse();
    const at = new Date(from).toISOString();
    const page = await this.rpc.call(
      'contacts.segments.members',
      {
        userId,
        segmentId,
        asOf: at,
        ...(typeof cursor === 'string' && cursor !== '' ? { cursor: cursor.slice(0, 64) } : {}),
      },
      { timeoutMs: LONG_TIMEOUT_MS },
    );
    return { ...page, asOf: at };
  }

  /** Every recipient of the segment as it is now (contacts added later do not join), page by page. */
  async segmentRecipients(userId: string, segmentId: string): Promise<SegmentRecipient[]> {
    const asOf = new Date().toISOString();
    const all: SegmentRecipient[] = [];
    let cursor: string | undefined;
    do {
      const page = await this.rpc.call(
        'contacts.segments.members',
        { userId, segmentId, asOf, ...(cursor ? { cursor } : {}) },
        { timeoutMs: LONG_TIMEOUT_MS },
      );
      all.push(...page.recipients);
      cursor = page.nextCursor ?? undefined;
    } while (cursor);
    return all;
  }

  conversations(userId: string) {
    return this.rpc.call('contacts.conversations.list', { userId });
  }

  thread(userId: string, phone: string, markRead = true) {
    return this.rpc.call('contacts.conversations.get', { userId, phone, markRead });
  }

  /**
   * An answer in the inbox: a one-recipient transactional job through the send path of every message
   * (policy, opt-outs, the sessions ledger), taken ahead of the account's queued campaign messages.
   */
  async answer(
    userId: string,
    rawPhone: string,
    { text, mediaId }: Infer<typeof ConversationAnswerSchema>,
    idempotencyKey: string | undefined,
  ) {
    const phone = conversationPhoneOf(rawPhone);
    if (!phone)
      throw AppError.validation(ContactsErrorCode.InvalidConversation, CONTACT_MESSAGES.conversationPhoneInvalid);
    // `{{name|there}}` in an answer is filled from the contact, like a campaign's.
    const found = await this.rpc.call('contacts.list', { userId, query: { q: phone, limit: '1' } });
    const contact = found.contacts.find((c) => c.phone === phone);
    const variables = contact ? { ...(contact.name ? { name: contact.name } : {}), ...contact.fields } : {};
    const filled = applyFallbacks(text, { recipients: [{ phone, variables }] });
    const { jobId } = await this.starter.start(
      {
        userId,
        message: filled.message,
        transactional: true,
        ...(mediaId === undefined || mediaId === null ? {} : { mediaId }),
        recipients: (filled.recipients as { phone: string; variables: Record<string, string> }[] | undefined) ?? [
          { phone, variables },
        ],
      },
      idempotencyKey,
    );
    return { id: jobId };
  }
}
