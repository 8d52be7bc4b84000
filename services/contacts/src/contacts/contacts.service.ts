import { Inject, Injectable } from '@nestjs/common';
import type { NatsConnection } from '@nats-io/transport-node';
import { Objm, type ObjectStore } from '@nats-io/obj';
import {
  checkWith,
  ContactBulkSchema,
  CONTACT_MESSAGES,
  ContactCreateSchema,
  ContactImportBodySchema,
  ContactListQuerySchema,
  ContactPatchSchema,
  CONTACTS_LIMITS,
  ContactsErrorCode,
  isUuid,
  STAGED_IMPORTS_BUCKET,
  type Contact,
  type ContactImportAnswer,
  type ContactImportRequest,
  type ContactListAnswer,
  type ContactSource,
} from '@bns/contracts';
import { AppError, NATS_CONNECTION } from '@bns/service-kit';
import { importAnswer, mergeImportRows } from './import-rows.js';
import { ContactsRepository, type BulkSelection } from './contacts.repository.js';
import { ContactsMetrics } from '../metrics/contacts.metrics.js';
import { SegmentsService } from '../segments/segments.service.js';

const notFound = () => AppError.notFound(ContactsErrorCode.NotFound, CONTACT_MESSAGES.notFound);
const exists = () => AppError.conflict(ContactsErrorCode.AlreadyExists, CONTACT_MESSAGES.alreadyExists);
const full = () =>
  AppError.conflict(ContactsErrorCode.LimitReached, CONTACT_MESSAGES.limitReached, {
    max: CONTACTS_LIMITS.contactsPerUserMax,
  });

/** A timestamptz as Postgres writes it (`2026-01-02 03:04:05.123456+00`). */
const PG_TIMESTAMP =
  /^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01]) ([01]\d|2[0-3]):[0-5]\d:[0-5]\d(\.\d{1,6})?[+-]\d{2}(:\d{2})?$/;

/** The page cursor: the last row's creation time (Postgres text, exact to the microsecond) and id. */
function cursorOf(createdKey: string, id: string): string {
  return Buffer.from(JSON.stringify([createdKey, id])).toString('base64url');
}
function parseCursor(cursor: string): { createdKey: string; id: string } | undefined {
  try {
    const [createdKey, id] = JSON.parse(Buffer.from(cursor, 'base64url').toString()) as unknown[];
    if (typeof createdKey !== 'string' || !PG_TIMESTAMP.test(createdKey) || !isUuid(id)) return undefined;
    return { createdKey, id };
  } catch {
    return undefined;
  }
}

/**
 * The user's contact book: validation and errors here, queries in ContactsRepository. Every query is
 * bounded by the caller's user id, so another user's contact is "not found".
 */
@Injectable()
export class ContactsService {
  private store?: Promise<ObjectStore>;

  constructor(
    private readonly contacts: ContactsRepository,
    private readonly metrics: ContactsMetrics,
    private readonly segments: SegmentsService,
    @Inject(NATS_CONNECTION) private readonly nc: NatsConnection,
  ) {}

  async list(userId: string, rawQuery: unknown): Promise<ContactListAnswer> {
    const query = checkWith(ContactListQuerySchema, rawQuery ?? {});
    if (!query.ok) throw AppError.validation(ContactsErrorCode.InvalidQuery, query.message, query.errors);
    const after = query.value.cursor === undefined ? undefined : parseCursor(query.value.cursor);
    if (query.value.cursor !== undefined && !after)
      throw AppError.validation(ContactsErrorCode.InvalidQuery, CONTACT_MESSAGES.cursorInvalid);
    const rule =
      query.value.segmentId === undefined ? undefined : (await this.segments.find(userId, query.value.segmentId)).rule;
    const page = await this.contacts.list(userId, {
      q: query.value.q,
      tag: query.value.tag,
      rule,
      after,
      limit: query.value.limit ?? CONTACTS_LIMITS.listPageDefault,
    });
    return {
      contacts: page.contacts,
      total: page.total,
      nextCursor: page.last ? cursorOf(page.last.created_key, page.last.id) : null,
    };
  }

  async get(userId: string, contactId: string): Promise<Contact> {
    const found = isUuid(contactId) ? await this.contacts.find(userId, contactId) : undefined;
    if (!found) throw notFound();
    return found;
  }

  /** Tag, untag or delete by ids (unknown ids are passed over) or everything a segment selects now. */
  async bulk(userId: string, body: unknown): Promise<{ affected: number }> {
    const input = checkWith(ContactBulkSchema, body);
    if (!input.ok) throw AppError.validation(ContactsErrorCode.InvalidContact, input.message, input.errors);
    const { action, tags = [], ids, segmentId } = input.value;
    let selection: BulkSelection;
    if (ids !== undefined) {
      const known = ids.filter((id) => isUuid(id));
      if (known.length === 0) return { affected: 0 };
      selection = { ids: known };
    } else selection = { rule: (await this.segments.find(userId, segmentId!)).rule };
    const affected = await this.contacts.bulk(userId, action, tags, selection, CONTACTS_LIMITS.bulkStatementRows);
    return { affected };
  }

  async create(userId: string, body: unknown, source: ContactSource = 'api'): Promise<Contact> {
    const input = checkWith(ContactCreateSchema, body);
    if (!input.ok) throw AppError.validation(ContactsErrorCode.InvalidContact, input.message, input.errors);
    const created = await this.contacts.insert(userId, input.value, source, CONTACTS_LIMITS.contactsPerUserMax);
    if (created === 'exists') throw exists();
    if (created === 'full') throw full();
    return created;
  }

  async update(userId: string, contactId: string, body: unknown): Promise<Contact> {
    // An unknown id answers 404 before the body is judged, so a 400 never confirms an id exists.
    const current = isUuid(contactId) ? await this.contacts.find(userId, contactId) : undefined;
    if (!current) throw notFound();
    const patch = checkWith(ContactPatchSchema, body);
    if (!patch.ok) throw AppError.validation(ContactsErrorCode.InvalidContact, patch.message, patch.errors);
    if (Object.keys(patch.value).length === 0) return current;
    const updated = await this.contacts.update(userId, contactId, patch.value);
    if (updated === 'exists') throw exists();
    if (!updated) throw notFound();
    return updated;
  }

  async remove(userId: string, contactId: string): Promise<{ id: string }> {
    if (!isUuid(contactId) || !(await this.contacts.delete(userId, contactId))) throw notFound();
    return { id: contactId };
  }

  /** All or nothing: every row is written in one transaction, or none (a refusal writes nothing). */
  async import(req: ContactImportRequest): Promise<ContactImportAnswer> {
    const started = performance.now();
    const raw = req.staged ? await this.readStaged(req.staged) : req.body;
    const body = checkWith(ContactImportBodySchema, raw);
    if (!body.ok) throw AppError.validation(ContactsErrorCode.InvalidImport, body.message, body.errors);
    const merged = mergeImportRows(body.value.rows, body.value.tags ?? []);
    const written = await this.contacts.importRows(
      req.userId,
      merged.rows,
      CONTACTS_LIMITS.importStatementRows,
      CONTACTS_LIMITS.contactsPerUserMax,
      CONTACTS_LIMITS.importAnalyzeRows,
    );
    if (written === 'full') {
      throw AppError.conflict(ContactsErrorCode.LimitReached, CONTACT_MESSAGES.limitReached, {
        max: CONTACTS_LIMITS.contactsPerUserMax,
      });
    }
    this.metrics.imported(merged.rows.length, performance.now() - started);
    return importAnswer(merged, written);
  }

  private async readStaged(staged: { bucket: string; name: string }): Promise<unknown> {
    if (staged.bucket !== STAGED_IMPORTS_BUCKET)
      throw AppError.validation(ContactsErrorCode.InvalidImport, CONTACT_MESSAGES.rowsInvalid);
    let bytes: Uint8Array | null;
    try {
      this.store ??= new Objm(this.nc).open(STAGED_IMPORTS_BUCKET);
      const store = await this.store;
      bytes = await store.getBlob(staged.name);
      if (bytes) await store.delete(staged.name).catch(() => undefined);
    } catch {
      this.store = undefined;
      throw AppError.unavailable();
    }
    if (!bytes) throw AppError.validation(ContactsErrorCode.ImportExpired, CONTACT_MESSAGES.importExpired);
    try {
      return JSON.parse(Buffer.from(bytes).toString('utf8')) as unknown;
    } catch {
      throw AppError.validation(ContactsErrorCode.InvalidImport, CONTACT_MESSAGES.rowsInvalid);
    }
  }
}
