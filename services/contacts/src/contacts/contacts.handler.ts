import { Controller } from '@nestjs/common';
import { Payload } from '@nestjs/microservices';
import type { ReplyOf, RequestOf } from '@bns/contracts';
import { Rpc } from '@bns/service-kit';
import { ConversationsService } from '../conversations/conversations.service.js';
import { SegmentsService } from '../segments/segments.service.js';
import { SettingsRepository } from '../settings/settings.repository.js';
import { ContactsService } from './contacts.service.js';

/** NATS entry points: one service call each. */
@Controller()
export class ContactsHandler {
  constructor(
    private readonly contacts: ContactsService,
    private readonly segments: SegmentsService,
    private readonly conversations: ConversationsService,
    private readonly settings: SettingsRepository,
  ) {}

  @Rpc('contacts.list')
  list(@Payload() req: RequestOf<'contacts.list'>): Promise<ReplyOf<'contacts.list'>> {
    return this.contacts.list(req.userId, req.query);
  }

  @Rpc('contacts.create')
  create(@Payload() req: RequestOf<'contacts.create'>): Promise<ReplyOf<'contacts.create'>> {
    return this.contacts.create(req.userId, req.body, req.source);
  }

  @Rpc('contacts.update')
  update(@Payload() req: RequestOf<'contacts.update'>): Promise<ReplyOf<'contacts.update'>> {
    return this.contacts.update(req.userId, req.contactId, req.body);
  }

  @Rpc('contacts.get')
  get(@Payload() req: RequestOf<'contacts.get'>): Promise<ReplyOf<'contacts.get'>> {
    return this.contacts.get(req.userId, req.contactId);
  }

  @Rpc('contacts.bulk')
  bulk(@Payload() req: RequestOf<'contacts.bulk'>): Promise<ReplyOf<'contacts.bulk'>> {
    return this.contacts.bulk(req.userId, req.body);
  }

  @Rpc('contacts.delete')
  remove(@Payload() req: RequestOf<'contacts.delete'>): Promise<ReplyOf<'contacts.delete'>> {
    return this.contacts.remove(req.userId, req.contactId);
  }

  @Rpc('contacts.import')
  import(@Payload() req: RequestOf<'contacts.import'>): Promise<ReplyOf<'contacts.import'>> {
    return this.contacts.import(req);
  }

  @Rpc('contacts.segments.create')
  createSegment(@Payload() req: RequestOf<'contacts.segments.create'>): Promise<ReplyOf<'contacts.segments.create'>> {
    return this.segments.create(req.userId, req.body);
  }

  @Rpc('contacts.segments.list')
  listSegments(@Payload() req: RequestOf<'contacts.segments.list'>): Promise<ReplyOf<'contacts.segments.list'>> {
    return this.segments.list(req.userId);
  }

  @Rpc('contacts.segments.delete')
  removeSegment(@Payload() req: RequestOf<'contacts.segments.delete'>): Promise<ReplyOf<'contacts.segments.delete'>> {
    return this.segments.remove(req.userId, req.segmentId);
  }

  @Rpc('contacts.segments.count')
  count(@Payload() req: RequestOf<'contacts.segments.count'>): Promise<ReplyOf<'contacts.segments.count'>> {
    return this.segments.count(req.userId, req.segmentId);
  }

  @Rpc('contacts.segments.preview')
  preview(@Payload() req: RequestOf<'contacts.segments.preview'>): Promise<ReplyOf<'contacts.segments.preview'>> {
    return this.segments.preview(req.userId, req.body);
  }

  @Rpc('contacts.segments.members')
  members(@Payload() req: RequestOf<'contacts.segments.members'>): Promise<ReplyOf<'contacts.segments.members'>> {
    return this.segments.members(req);
  }

  @Rpc('contacts.conversations.list')
  conversationsList(
    @Payload() req: RequestOf<'contacts.conversations.list'>,
  ): Promise<ReplyOf<'contacts.conversations.list'>> {
    return this.conversations.list(req.userId);
  }

  @Rpc('contacts.conversations.get')
  thread(@Payload() req: RequestOf<'contacts.conversations.get'>): Promise<ReplyOf<'contacts.conversations.get'>> {
    return this.conversations.get(req.userId, req.phone, req.markRead ?? true);
  }

  @Rpc('contacts.conversations.mark')
  mark(@Payload() req: RequestOf<'contacts.conversations.mark'>): Promise<ReplyOf<'contacts.conversations.mark'>> {
    return this.conversations.mark(req.userId, req.phone, req.unread);
  }

  @Rpc('contacts.settings.get')
  getSettings(@Payload() req: RequestOf<'contacts.settings.get'>): Promise<ReplyOf<'contacts.settings.get'>> {
    return this.settings.get(req.userId);
  }

  @Rpc('contacts.settings.set')
  setSettings(@Payload() req: RequestOf<'contacts.settings.set'>): Promise<ReplyOf<'contacts.settings.set'>> {
    return this.settings.set(req.userId, { saveRecipients: req.saveRecipients });
  }
}
