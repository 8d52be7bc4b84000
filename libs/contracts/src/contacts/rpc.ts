import type { z } from '../common/schema.js';
import type {
  ContactCreateRequestSchema,
  ContactBulkRequestSchema,
  ContactImportRequestSchema,
  ContactListRequestSchema,
  ContactRefSchema,
  ContactsUserRequestSchema,
  ContactUpdateRequestSchema,
  ConversationMarkRequestSchema,
  ConversationRefSchema,
  SegmentCreateRequestSchema,
  SegmentMembersRequestSchema,
  SegmentRefSchema,
  SettingsSetRequestSchema,
} from './schemas.js';
import type {
  Contact,
  ContactImportAnswer,
  ContactListAnswer,
  Conversation,
  Segment,
  SegmentRecipient,
  ThreadMessage,
} from './types.js';

export type ContactsUserRequest = z.output<typeof ContactsUserRequestSchema>;
export type ContactListRequest = z.output<typeof ContactListRequestSchema>;
export type ContactCreateRequest = z.output<typeof ContactCreateRequestSchema>;
export type ContactRef = z.output<typeof ContactRefSchema>;
export type ContactUpdateRequest = z.output<typeof ContactUpdateRequestSchema>;
export type ContactImportRequest = z.output<typeof ContactImportRequestSchema>;
export type SegmentCreateRequest = z.output<typeof SegmentCreateRequestSchema>;
export type SegmentRef = z.output<typeof SegmentRefSchema>;
export type SegmentMembersRequest = z.output<typeof SegmentMembersRequestSchema>;
export type ConversationRef = z.output<typeof ConversationRefSchema>;
export type ConversationMarkRequest = z.output<typeof ConversationMarkRequestSchema>;
export type ContactBulkRequest = z.output<typeof ContactBulkRequestSchema>;
export type ContactsSettingsSetRequest = z.output<typeof SettingsSetRequestSchema>;

export interface ContactsSettings {
  /** Numbers sent to from a pasted list or a file are added (or updated) as contacts. */
  saveRecipients: boolean;
}

/**
 * Requests the contacts service answers. Every request carries the acting `userId`; a contact or
 * segment of another user is "not found". Bodies travel as the client sent them and are checked by
 * the service with the schemas of schemas.ts.
 */
export interface ContactsRequests {
  'contacts.list': { request: ContactListRequest; reply: ContactListAnswer };
  'contacts.create': { request: ContactCreateRequest; reply: Contact };
  'contacts.update': { request: ContactUpdateRequest; reply: Contact };
  'contacts.get': { request: ContactRef; reply: Contact };
  'contacts.delete': { request: ContactRef; reply: { id: string } };
  /** Tag, untag or delete the contacts named by id or selected by a segment: {affected}. */
  'contacts.bulk': { request: ContactBulkRequest; reply: { affected: number } };
  /** All or nothing; rows merged by phone. */
  'contacts.import': { request: ContactImportRequest; reply: ContactImportAnswer };
  'contacts.segments.create': { request: SegmentCreateRequest; reply: { id: string } };
  'contacts.segments.list': { request: ContactsUserRequest; reply: { segments: Segment[] } };
  'contacts.segments.delete': { request: SegmentRef; reply: { id: string } };
  'contacts.segments.count': { request: SegmentRef; reply: { count: number } };
  /** How many contacts an unsaved rule `{rule}` selects now (the editor's live count). */
  'contacts.segments.preview': { request: SegmentCreateRequest; reply: { count: number } };
  /** One page of a segment's recipients, by phone; `nextCursor` continues. */
  'contacts.segments.members': {
    request: SegmentMembersRequest;
    reply: { recipients: SegmentRecipient[]; nextCursor: string | null };
  };
  'contacts.conversations.list': { request: ContactsUserRequest; reply: { conversations: Conversation[] } };
  /** The thread, oldest first; opening it marks its replies read. */
  'contacts.conversations.get': { request: ConversationRef; reply: { messages: ThreadMessage[] } };
  /** Mark a conversation read (unread 0) or unread again (at least 1). */
  'contacts.conversations.mark': { request: ConversationMarkRequest; reply: { phone: string; unread: number } };
  'contacts.settings.get': { request: ContactsUserRequest; reply: ContactsSettings };
  'contacts.settings.set': { request: ContactsSettingsSetRequest; reply: ContactsSettings };
}
