import { Injectable } from '@nestjs/common';
import {
  checkWith,
  CONTACT_MESSAGES,
  CONTACTS_LIMITS,
  ContactsErrorCode,
  isUuid,
  SegmentCreateSchema,
  SegmentPreviewSchema,
  type Segment,
  type SegmentMembersRequest,
  type SegmentRecipient,
} from '@bns/contracts';
import { AppError } from '@bns/service-kit';
import { SegmentsRepository } from './segments.repository.js';

const notFound = () => AppError.notFound(ContactsErrorCode.SegmentNotFound, CONTACT_MESSAGES.segmentNotFound);

/** Saved segments and what they select. Another user's segment is "not found". */
@Injectable()
export class SegmentsService {
  constructor(private readonly segments: SegmentsRepository) {}

  async create(userId: string, body: unknown): Promise<{ id: string }> {
    const input = checkWith(SegmentCreateSchema, body);
    if (!input.ok) throw AppError.validation(ContactsErrorCode.InvalidSegment, input.message, input.errors);
    const created = await this.segments.insertUnlessFull(userId, input.value, CONTACTS_LIMITS.segmentsPerUserMax);
    if (created === 'full')
      throw AppError.conflict(ContactsErrorCode.SegmentLimitReached, CONTACT_MESSAGES.segmentLimitReached);
    return created;
  }

  async list(userId: string): Promise<{ segments: Segment[] }> {
    return { segments: await this.segments.list(userId) };
  }

  async remove(userId: string, segmentId: string): Promise<{ id: string }> {
    if (!isUuid(segmentId) || !(await this.segments.delete(userId, segmentId))) throw notFound();
    return { id: segmentId };
  }

  async preview(userId: string, body: unknown): Promise<{ count: number }> {
    const input = checkWith(SegmentPreviewSchema, body);
    if (!input.ok) throw AppError.validation(ContactsErrorCode.InvalidSegment, input.message, input.errors);
    return { count: await this.segments.count(userId, input.value.rule) };
  }

  async count(userId: string, segmentId: string): Promise<{ count: number }> {
    const segment = await this.find(userId, segmentId);
    return { count: await this.segments.count(userId, segment.rule) };
  }

  async members(req: SegmentMembersRequest): Promise<{ recipients: SegmentRecipient[]; nextCursor: string | null }> {
    const segment = await this.find(req.userId, req.segmentId);
    if (Number.isNaN(Date.parse(req.asOf)) || (req.cursor !== undefined && !/^\d{8}$/.test(req.cursor)))
      throw AppError.validation(ContactsErrorCode.InvalidSegment, CONTACT_MESSAGES.cursorInvalid);
    const limit = CONTACTS_LIMITS.membersPage;
    const recipients = await this.segments.members(req.userId, segment.rule, req.asOf, req.cursor, limit);
    return { recipients, nextCursor: recipients.length === limit ? recipients[limit - 1]!.phone : null };
  }

  /** The user's segment, or "Segment not found" (404). */
  async find(userId: string, segmentId: string): Promise<Segment> {
    const found = isUuid(segmentId) ? await this.segments.find(userId, segmentId) : undefined;
    if (!found) throw notFound();
    return found;
  }
}
