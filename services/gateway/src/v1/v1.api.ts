import {
  applyFallbacks,
  AuditQuerySchema,
  checkWith,
  CommonErrorCode,
  INTEGRATIONS_MESSAGES as M,
  REQUEST_MESSAGES,
  V1CampaignCreateSchema,
  V1MessageCreateSchema,
  type JobView,
  type RecipientResult,
  type Schema,
  type V1Message,
} from '@bns/contracts';
import type { IncomingMessage } from 'node:http';
import { AppError, type RpcClient } from '@bns/service-kit';
import type { ContactsApi } from '../contacts/contacts.api.js';
import type { JobStarter } from '../jobs/job-starter.js';
import type { MediaUploads } from '../media/media-uploads.js';

/** A body or query checked with its contracts schema; a refusal is a validation problem naming the fields. */
function checked<T>(schema: Schema<T>, value: unknown): T {
  const result = checkWith(schema, value);
  if (!result.ok) throw AppError.validation(CommonErrorCode.BadRequest, result.message, result.errors);
  return result.value;
}

function object(body: unknown): Record<string, unknown> {
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    throw AppError.validation(CommonErrorCode.BadRequest, REQUEST_MESSAGES.bodyNotObject);
  return body as Record<string, unknown>;
}

/** A query value as one string (a repeated parameter counts by its first value). */
const one = (v: unknown): string | undefined => (Array.isArray(v) ? one(v[0]) : typeof v === 'string' ? v : undefined);

/** A campaign as /v1 shows it: the job without its result lists (those are paged at /results). */
function campaignOf(job: JobView): Record<string, unknown> {
  const { jobId, results: _lists, ...rest } = job;
  return { id: jobId, ...rest };
}

/**
 * The /v1 calls, each a mapping to the owning services' NATS calls for the key's owner. Every id is
 * looked up within that user's data, so another user's campaign or message is "not found" (404).
 */
export class V1Api {
  constructor(
    private readonly rpc: RpcClient,
    private readonly starter: JobStarter,
    private readonly book: ContactsApi,
    private readonly media: MediaUploads,
  ) {}

  /** One attachment, streamed from a multipart body (field `file`) as `POST /api/media` takes it. */
  upload(userId: string, req: IncomingMessage) {
    return this.media.upload(userId, req);
  }

  mediaItem(userId: string, mediaId: string) {
    return this.media.get(userId, mediaId);
  }

  /**
   * A body naming an attachment the user does not have is 404 before anything else is judged (the jobs
   * service checks it again in the start's transaction).
   */
  private async attachmentFirst(userId: string, body: unknown): Promise<void> {
    const mediaId = typeof body === 'object' && body !== null ? (body as { mediaId?: unknown }).mediaId : undefined;
    if (mediaId !== undefined && mediaId !== null) await this.rpc.call('jobs.media.get', { userId, mediaId });
  }

  async account(userId: string) {
    const [session, { policy }, today] = await Promise.all([
      this.rpc.call('sessions.status', { userId }),
      this.rpc.call('jobs.policy.get', { userId }),
      this.rpc.call('jobs.sends.today', { userId }),
    ]);
    return {
      userId,
      whatsapp: { state: session.state, ...(session.phoneNumber ? { phoneNumber: session.phoneNumber } : {}) },
      policy,
      today,
    };
  }

  async audit(userId: string, query: Record<string, unknown>) {
    const q = checked(AuditQuerySchema, { kind: one(query.kind), cursor: one(query.cursor), limit: one(query.limit) });
    return this.rpc.call('integrations.audit.list', { userId, ...q });
  }

  async templates(userId: string) {
    return { data: await this.rpc.call('templates.list', { userId }) };
  }

  async campaigns(userId: string, query: Record<string, unknown>) {
    const page = await this.rpc.call('jobs.list', {
      userId,
      cursor: one(query.cursor),
      limit: one(query.limit),
      active: one(query.active),
    });
    return { data: page.jobs.map(({ jobId, ...rest }) => ({ id: jobId, ...rest })), nextCursor: page.nextCursor };
  }

  async campaign(userId: string, jobId: string) {
    return { ...campaignOf(await this.job(userId, jobId)) };
  }

  async results(userId: string, jobId: string, query: Record<string, unknown>) {
    const page = await this.rpc.call('jobs.results', {
      userId,
      jobId,
      status: one(query.status),
      cursor: one(query.cursor),
      limit: one(query.limit),
    });
    return { data: page.results, nextCursor: page.nextCursor };
  }

  async campaignAction(userId: string, jobId: string, action: 'pause' | 'resume' | 'cancel') {
    const { job } = await this.rpc.call(`jobs.${action}`, { userId, jobId });
    return campaignOf(job);
  }

  async startCampaign(userId: string, body: unknown, idempotencyKey: string | undefined) {
    await this.attachmentFirst(userId, body);
    // A segmentId becomes the segment's recipients, and {{var|fallback}} is filled, before the check.
    const input = checked(V1CampaignCreateSchema, await this.book.resolveStart(userId, object(body)));
    const started = await this.starter.start(
      {
        userId,
        message: input.message,
        phoneNumbers: input.phoneNumbers ?? undefined,
        recipients: input.recipients ?? undefined,
        ...(input.mediaId === undefined || input.mediaId === null ? {} : { mediaId: input.mediaId }),
        ...(input.startAt ? { startAt: input.startAt } : {}),
      },
      JobStarterKey.of(idempotencyKey),
    );
    return {
      id: started.jobId,
      status: started.status,
      total: started.total,
      estimatedFinishAt: started.estimatedFinishAt,
    };
  }

  async contacts(userId: string, query: Record<string, unknown>) {
    const page = await this.book.list(userId, {
      q: one(query.q),
      tag: one(query.tag),
      segmentId: one(query.segmentId),
      cursor: one(query.cursor),
      limit: one(query.limit),
    });
    return { data: page.contacts, nextCursor: page.nextCursor, total: page.total };
  }

  contact(userId: string, id: string) {
    return this.book.get(userId, id);
  }

  createContact(userId: string, body: unknown) {
    return this.book.create(userId, object(body));
  }

  updateContact(userId: string, id: string, body: unknown) {
    return this.book.update(userId, id, object(body));
  }

  async deleteContact(userId: string, id: string) {
    await this.book.remove(userId, id);
    return { id, deleted: true };
  }

  async segments(userId: string) {
    return { data: (await this.book.segments(userId)).segments };
  }

  createSegment(userId: string, body: unknown) {
    return this.book.createSegment(userId, object(body));
  }

  segmentCount(userId: string, id: string) {
    return this.book.count(userId, id);
  }

  async deleteSegment(userId: string, id: string) {
    await this.book.removeSegment(userId, id);
    return { id, deleted: true };
  }

  async optOuts(userId: string, query: Record<string, unknown>) {
    const page = await this.rpc.call('jobs.optouts.list', {
      userId,
      cursor: one(query.cursor),
      limit: one(query.limit),
      q: one(query.q),
    });
    return { data: page.optOuts, nextCursor: page.nextCursor, total: page.total };
  }

  async addOptOuts(userId: string, body: unknown) {
    return this.rpc.call('jobs.optouts.add', { userId, phoneNumbers: object(body).phoneNumbers });
  }

  async removeOptOut(userId: string, phone: unknown) {
    const value = one(phone);
    if (value === undefined)
      throw AppError.validation(
        CommonErrorCode.BadRequest,
        'Name the number to remove: DELETE /v1/opt-outs/{phoneNumber}',
      );
    return this.rpc.call('jobs.optouts.remove', { userId, phone: value });
  }

  /**
   * One transactional message: a one-recipient job of the account, under its sending policy, taken
   * before its campaigns. Its metadata is stored (by the integrations service) before the answer: a
   * failure there is a 503, and the client's retry with the same Idempotency-Key finds the same job.
   */
  async sendMessage(userId: string, body: unknown, idempotencyKey: string | undefined) {
    await this.attachmentFirst(userId, body);
    const input = checked(V1MessageCreateSchema, object(body));
    const template =
      input.text === undefined ? await this.rpc.call('templates.use', { userId, templateId: input.templateId! }) : null;
    const text = input.text ?? template!.message_content;
    // The request's own attachment, else the template's.
    const mediaId = input.mediaId ?? template?.mediaId;
    // {{var|fallback}} takes the fallback when the variable is missing or empty.
    const filled = applyFallbacks(text, {
      recipients: [{ phone: input.to, variables: input.variables ?? {} }],
    });
    const recipients =
      (filled.recipients as { phone: string; variables: Record<string, unknown> }[] | undefined) ??
      (input.variables ? [{ phone: input.to, variables: input.variables }] : undefined);
    const started = await this.starter.start(
      {
        userId,
        message: filled.message,
        transactional: true,
        ...(recipients ? { recipients } : { phoneNumbers: [input.to] }),
        ...(mediaId === undefined || mediaId === null ? {} : { mediaId }),
      },
      JobStarterKey.of(idempotencyKey),
    );
    if (input.metadata && Object.keys(input.metadata).length > 0)
      await this.rpc.call('integrations.messages.metadata.put', {
        userId,
        messageId: started.jobId,
        metadata: input.metadata,
      });
    return { id: started.jobId, status: 'queued' as const };
  }

  async message(userId: string, id: string): Promise<V1Message> {
    const [job, page] = await Promise.all([
      this.job(userId, id),
      this.rpc.call('jobs.results', { userId, jobId: id, limit: '1' }),
    ]);
    const result = page.results[0];
    if (!result || job.progress.total !== 1) throw AppError.notFound(CommonErrorCode.NotFound, M.messageNotFound);
    // Asked only for a message of this user (an unknown id is a 404 above, whatever its form).
    const { metadata } = await this.rpc.call('integrations.messages.metadata.get', { userId, messageId: id });
    return { id, to: result.phoneNumber, ...timelineOf(job, result), ...(metadata ? { metadata } : {}) };
  }

  private async job(userId: string, jobId: string): Promise<JobView> {
    const answer = await this.rpc.call('jobs.status', { userId, jobId });
    if (!('jobJson' in answer)) throw AppError.notFound();
    return JSON.parse(answer.jobJson) as JobView;
  }
}

/** The client's Idempotency-Key, passed on to the jobs service's own start idempotency (checked by the router). */
const JobStarterKey = {
  of: (key: string | undefined) => key,
};

function timelineOf(job: JobView, r: RecipientResult): Pick<V1Message, 'status' | 'timeline'> {
  const timeline: V1Message['timeline'] = [{ status: 'queued', at: job.createdAt }];
  const add = (status: V1Message['status'], at: string | null | undefined, reason?: string) => {
    if (at) timeline.push({ status, at, ...(reason ? { reason } : {}) });
  };
  add('sent', r.sentAt);
  add('delivered', r.deliveredAt);
  add('read', r.readAt);
  add('replied', r.repliedAt);
  if (r.status === 'failed') add('failed', r.failedAt ?? job.finishedAt ?? job.createdAt, r.error);
  if (r.status === 'skipped') add('skipped', job.finishedAt ?? job.createdAt, r.error);
  return { status: r.status === 'pending' ? 'queued' : r.status, timeline };
}
