import type {
  ContactImportAnswer,
  ContactListAnswer,
  Conversation,
  Segment,
  SegmentRecipient,
  SegmentRule,
  ThreadMessage,
} from '@bns/contracts';
import { api } from '../../api/api.js';
import type { RecipientColumns } from '../sender/slice.js';

export interface ContactPageArgs {
  q: string;
  tag: string;
  segmentId?: string;
  cursor: string | null;
  limit: number;
}

/** The contact book, segments and inbox calls, injected into the app's one API (api.ts stays as it is). */
export const contactsApi = api
  .enhanceEndpoints({ addTagTypes: ['Contacts', 'Segments', 'Conversations'] })
  .injectEndpoints({
    endpoints: (build) => ({
      getContacts: build.query<ContactListAnswer, ContactPageArgs>({
        query: ({ q, tag, segmentId, cursor, limit }) => {
          const params = new URLSearchParams({ limit: String(limit) });
          if (q) params.set('q', q);
          if (tag) params.set('tag', tag);
          if (segmentId) params.set('segmentId', segmentId);
          if (cursor) params.set('cursor', cursor);
          return `api/contacts?${params.toString()}`;
        },
        providesTags: ['Contacts'],
      }),
      addContact: build.mutation<unknown, { phone: string; name?: string; tags?: string[] }>({
        query: (body) => ({ url: 'api/contacts', method: 'POST', body }),
        invalidatesTags: ['Contacts', 'Segments'],
      }),
      deleteContact: build.mutation<unknown, string>({
        query: (id) => ({ url: `api/contacts/${encodeURIComponent(id)}`, method: 'DELETE' }),
        invalidatesTags: ['Contacts', 'Segments'],
      }),
      bulkContacts: build.mutation<{ affected: number }, ContactBulk>({
        query: (body) => ({ url: 'api/contacts/bulk', method: 'POST', body }),
        invalidatesTags: ['Contacts', 'Segments'],
      }),
      importContacts: build.mutation<ContactImportAnswer, { rows: unknown[]; tags?: string[] }>({
        query: (body) => ({ url: 'api/contacts/import', method: 'POST', body }),
        invalidatesTags: ['Contacts', 'Segments'],
      }),
      getContactSettings: build.query<{ saveRecipients: boolean }, void>({
        query: () => 'api/contacts/settings',
        providesTags: ['Contacts'],
      }),
      setContactSettings: build.mutation<{ saveRecipients: boolean }, { saveRecipients: boolean }>({
        query: (body) => ({ url: 'api/contacts/settings', method: 'PUT', body }),
        invalidatesTags: ['Contacts'],
      }),
      getSegments: build.query<Segment[], void>({
        query: () => 'api/segments',
        transformResponse: (r: { segments?: Segment[] }) => r.segments ?? [],
        providesTags: ['Segments'],
      }),
      createSegment: build.mutation<{ id: string }, { name: string; rule: SegmentRule }>({
        query: (body) => ({ url: 'api/segments', method: 'POST', body }),
        invalidatesTags: ['Segments'],
      }),
      segmentMembers: build.query<
        { recipients: SegmentRecipient[]; nextCursor: string | null; asOf: string },
        { segmentId: string; cursor?: string; asOf?: string }
      >({
        query: ({ segmentId, cursor, asOf }) => {
          const params = new URLSearchParams();
          if (cursor) params.set('cursor', cursor);
          if (asOf) params.set('asOf', asOf);
          return `api/segments/${encodeURIComponent(segmentId)}/members?${params.toString()}`;
        },
        keepUnusedDataFor: 0,
      }),
      /** The live count of a rule being edited (its JSON, so equal rules share one answer). */
      previewSegment: build.query<{ count: number }, string>({
        query: (rule) => ({ url: 'api/segments/preview', method: 'POST', body: { rule: JSON.parse(rule) as unknown } }),
        providesTags: ['Contacts'],
      }),
      segmentCount: build.query<{ count: number }, string>({
        query: (id) => `api/segments/${encodeURIComponent(id)}/count`,
        providesTags: ['Segments', 'Contacts'],
      }),
      getConversations: build.query<Conversation[], void>({
        query: () => 'api/conversations',
        transformResponse: (r: { conversations?: Conversation[] }) => r.conversations ?? [],
        providesTags: ['Conversations'],
      }),
      getThread: build.query<ThreadMessage[], string>({
        query: (phone) => `api/conversations/${encodeURIComponent(phone)}`,
        transformResponse: (r: { messages?: ThreadMessage[] }) => r.messages ?? [],
        providesTags: ['Conversations'],
      }),
      /** A contact's messages across campaigns and the inbox, read without marking them read. */
      getHistory: build.query<ThreadMessage[], string>({
        query: (phone) => `api/conversations/${encodeURIComponent(phone)}?markRead=false`,
        transformResponse: (r: { messages?: ThreadMessage[] }) => r.messages ?? [],
        providesTags: ['Conversations'],
      }),
      answer: build.mutation<{ id: string }, { phone: string; text: string; mediaId?: string }>({
        query: ({ phone, ...body }) => ({
          url: `api/conversations/${encodeURIComponent(phone)}/messages`,
          method: 'POST',
          body,
        }),
        invalidatesTags: ['Conversations'],
      }),
      markConversation: build.mutation<{ phone: string; unread: number }, { phone: string; unread: boolean }>({
        query: ({ phone, unread }) => ({
          url: `api/conversations/${encodeURIComponent(phone)}/${unread ? 'unread' : 'read'}`,
          method: 'POST',
        }),
        invalidatesTags: ['Conversations'],
      }),
    }),
  });

export const {
  useGetContactsQuery,
  useAddContactMutation,
  useDeleteContactMutation,
  useImportContactsMutation,
  useGetSegmentsQuery,
  useGetContactSettingsQuery,
  useSetContactSettingsMutation,
  useCreateSegmentMutation,
  useSegmentCountQuery,
  usePreviewSegmentQuery,
  useGetConversationsQuery,
  useGetThreadQuery,
  useGetHistoryQuery,
  useAnswerMutation,
  useBulkContactsMutation,
  useMarkConversationMutation,
} = contactsApi;

/** A bulk change: tag, untag or delete the chosen contacts (ids) or a segment's. */
export type ContactBulk = { action: 'tag' | 'untag' | 'delete'; tags?: string[] } & (
  { ids: string[] } | { segmentId: string }
);

/**
 * A mapped file's rows as import rows: the `name` column is the contact's name, a `tags` column (words
 * separated by ; or ,) its tags, every other column a field; blank cells are left out.
 */
export function rowsFromColumns(columns: RecipientColumns): ContactImportRow[] {
  const { phones, names, values } = columns;
  return phones.map((phone, i) => {
    const row: ContactImportRow = { phone };
    const fields: Record<string, string> = {};
    names.forEach((name, k) => {
      const value = values[k]![i]!.trim();
      if (value === '') return;
      if (name === 'name') row.name = value;
      else if (name === 'tags')
        row.tags = value
          .split(/[;,]/)
          .map((t) => t.trim())
          .filter(Boolean);
      else fields[name] = value;
    });
    if (Object.keys(fields).length > 0) row.fields = fields;
    return row;
  });
}

export interface ContactImportRow {
  phone: string;
  name?: string;
  tags?: string[];
  fields?: Record<string, string>;
}

/** "phone,name,tags" lines (tags separated by ;) as import rows; a header line starting with "phone" is skipped. */
export function rowsFromText(text: string): { phone: string; name?: string; tags?: string[] }[] {
  return text
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line !== '' && !/^phone\b/i.test(line))
    .map((line) => {
      const [phone = '', name = '', tags = ''] = line.split(',').map((c) => c.trim());
      const list = tags
        .split(';')
        .map((t) => t.trim())
        .filter(Boolean);
      return { phone, ...(name ? { name } : {}), ...(list.length ? { tags: list } : {}) };
    });
}
