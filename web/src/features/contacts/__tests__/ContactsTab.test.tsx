import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { fakeFetch, renderWithProviders } from '../../../test/renderWithProviders.js';
import { InboxTab } from '../../inbox/InboxTab.js';
import { ContactsTab, ruleOf } from '../ContactsTab.js';
import { rowsFromText } from '../contactsApi.js';

afterEach(() => vi.unstubAllGlobals());

const contact = (phone: string, name: string, tags: string[]) => ({
  id: `id-${phone}`,
  phone,
  name,
  fields: {},
  tags,
  source: 'import',
  createdAt: '2026-01-01T00:00:00.000Z',
  updatedAt: '2026-01-01T00:00:00.000Z',
  facts: {
    optedOutAt: null,
    notOnWhatsAppAt: null,
    lastMessagedAt: null,
    lastDeliveredAt: null,
    lastReadAt: null,
    lastRepliedAt: null,
  },
});

describe('Contacts tab', () => {
  it('reads pasted "phone,name,tags" lines as import rows', () => {
    expect(rowsFromText('phone,name,tags\n91234567, Ann ,vip;new\n\n92345678')).toEqual([
      { phone: '91234567', name: 'Ann', tags: ['vip', 'new'] },
      { phone: '92345678' },
    ]);
  });

  it('lists the book, searches it and imports pasted rows', async () => {
    const all = [contact('91234567', 'Ann', ['vip']), contact('92345678', 'Ben', [])];
    const fetch = fakeFetch((_method, url, body) => {
      if (url.pathname === '/api/contacts/import') {
        expect(body).toEqual({ rows: [{ phone: '93456789', name: 'Cat' }], tags: [] });
        return { body: { created: 1, updated: 0, invalid: 0, duplicates: 0, invalidRows: [] } };
      }
      if (url.pathname === '/api/segments') return { body: { segments: [] } };
      const q = url.searchParams.get('q') ?? '';
      const contacts = all.filter((c) => c.name.toLowerCase().includes(q.toLowerCase()));
      return { body: { contacts, nextCursor: null, total: contacts.length } };
    });
    vi.stubGlobal('fetch', fetch.fn);
    renderWithProviders(<ContactsTab />);
    expect(await screen.findByText('Ann')).toBeTruthy();
    expect(screen.getByText('Ben')).toBeTruthy();
    await userEvent.type(screen.getByLabelText('Search contacts'), 'ann');
    await waitFor(() => expect(screen.queryByText('Ben')).toBeNull());
    await userEvent.type(screen.getByLabelText('Contacts to import'), '93456789,Cat');
    await userEvent.click(screen.getByRole('button', { name: 'Import' }));
    expect(await screen.findByText('1 created, 0 updated, 0 invalid, 0 duplicates')).toBeTruthy();
  }, 30_000);

  it('offers the invalid rows of an import as a file to correct, until the next import', async () => {
    const saved: Blob[] = [];
    vi.stubGlobal(
      'URL',
      Object.assign(URL, {
        createObjectURL: vi.fn((b: Blob) => (saved.push(b), 'blob:invalid')),
        revokeObjectURL: vi.fn(),
      }),
    );
    let answer = { created: 1, updated: 0, invalid: 2, duplicates: 0, invalidRows: [2, 3] };
    const fetch = fakeFetch((_method, url) => {
      if (url.pathname === '/api/contacts/import') return { body: answer };
      if (url.pathname === '/api/segments') return { body: { segments: [] } };
      return { body: { contacts: [], nextCursor: null, total: 0 } };
    });
    vi.stubGlobal('fetch', fetch.fn);
    renderWithProviders(<ContactsTab />);
    await userEvent.type(screen.getByLabelText('Contacts to import'), '93456789,Cat\ncall me,Dan\n=1+2,Eve;vip');
    await userEvent.click(screen.getByRole('button', { name: 'Import' }));
    expect(
      await screen.findByText(/2 rows of pasted lines had no valid phone number and were not imported/),
    ).toBeTruthy();
    await userEvent.click(screen.getByRole('button', { name: 'Download the invalid rows' }));
    expect(saved).toHaveLength(1);
    expect((await saved[0]!.text()).split('\r\n')).toEqual([
      'row,phone,name,tags,fields',
      '2,call me,Dan,,',
      "3,'=1+2,Eve;vip,,",
      '',
    ]);
    // The next import, all valid, takes the notice away.
    answer = { created: 1, updated: 0, invalid: 0, duplicates: 0, invalidRows: [] };
    await userEvent.type(screen.getByLabelText('Contacts to import'), '94567890,Fay');
    await userEvent.click(screen.getByRole('button', { name: 'Import' }));
    await waitFor(() => expect(screen.queryByRole('button', { name: 'Download the invalid rows' })).toBeNull());
  }, 30_000);
});

describe('Contacts tab: settings', () => {
  it('turns "Save recipients as contacts" off and on', async () => {
    let saveRecipients = true;
    const fetch = fakeFetch((method, url, body) => {
      if (url.pathname === '/api/contacts/settings') {
        if (method === 'PUT') saveRecipients = (body as { saveRecipients: boolean }).saveRecipients;
        return { body: { saveRecipients } };
      }
      if (url.pathname === '/api/segments') return { body: { segments: [] } };
      if (url.pathname === '/api/segments/preview') return { body: { count: 0 } };
      return { body: { contacts: [], nextCursor: null, total: 0 } };
    });
    vi.stubGlobal('fetch', fetch.fn);
    renderWithProviders(<ContactsTab />);
    const box = (await screen.findByLabelText('Save recipients as contacts')) as HTMLInputElement;
    expect(box.checked).toBe(true);
    await userEvent.click(box);
    await waitFor(() => expect(saveRecipients).toBe(false));
    await waitFor(() =>
      expect((screen.getByLabelText('Save recipients as contacts') as HTMLInputElement).checked).toBe(false),
    );
  }, 30_000);
});

describe('Contacts tab: a contact’s panel', () => {
  it('shows the fields, tags and message history without marking the conversation read', async () => {
    const ann = { ...contact('91234567', 'Ann', ['vip']), fields: { city: 'Sha Tin' } };
    const fetch = fakeFetch((_method, url) => {
      if (url.pathname === '/api/segments') return { body: { segments: [] } };
      if (url.pathname === '/api/segments/preview') return { body: { count: 1 } };
      if (url.pathname === '/api/conversations/91234567') {
        expect(url.searchParams.get('markRead')).toBe('false');
        return {
          body: {
            messages: [
              { direction: 'out', text: 'Sale today', at: '2026-01-01T00:00:00.000Z', status: 'read' },
              { direction: 'in', text: 'See you!', at: '2026-01-01T00:01:00.000Z' },
            ],
          },
        };
      }
      return { body: { contacts: [ann], nextCursor: null, total: 1 } };
    });
    vi.stubGlobal('fetch', fetch.fn);
    renderWithProviders(<ContactsTab />);
    await userEvent.click(await screen.findByRole('button', { name: '91234567' }));
    const panel = await screen.findByRole('complementary', { name: 'Contact 91234567' });
    expect(panel.textContent).toContain('Sha Tin');
    expect(panel.textContent).toContain('Tags: vip');
    expect(await within(panel).findByText('See you!')).toBeTruthy();
    expect(within(panel).getByText('Sale today')).toBeTruthy();
  }, 30_000);
});

describe('Contacts tab: the segment editor', () => {
  it('turns the inputs into a rule: tags, a field condition, a fact', () => {
    const base = {
      anyOf: 'vip, new',
      allOf: '',
      noneOf: 'staff',
      fieldKey: 'city',
      fieldOp: 'contains' as const,
      fieldValue: 'Sha',
      fact: 'read',
      factValue: false,
      days: 30,
    };
    expect(ruleOf(base)).toEqual({
      tags: { anyOf: ['vip', 'new'], noneOf: ['staff'] },
      fields: [{ key: 'city', op: 'contains', value: 'Sha' }],
      facts: [{ fact: 'read', value: false }],
    });
    expect(ruleOf({ ...base, anyOf: '', noneOf: '', fieldKey: '', fact: 'notMessagedForDays', days: 0 })).toEqual({
      facts: [{ fact: 'notMessagedForDays', days: 1 }],
    });
    expect(ruleOf({ ...base, anyOf: '', noneOf: '', fieldOp: 'isEmpty', fact: '' })).toEqual({
      fields: [{ key: 'city', op: 'isEmpty' }],
    });
  });

  it('counts live while the rule is edited, then saves it by name', async () => {
    const previews: unknown[] = [];
    const fetch = fakeFetch((method, url, body) => {
      if (url.pathname === '/api/segments/preview') {
        previews.push(body);
        const rule = (body as { rule: { tags?: { anyOf?: string[] } } }).rule;
        return { body: { count: rule.tags?.anyOf ? 12 : 20 } };
      }
      if (url.pathname === '/api/segments' && method === 'POST') return { status: 201, body: { id: 'seg-9' } };
      if (url.pathname === '/api/segments') return { body: { segments: [] } };
      return { body: { contacts: [], nextCursor: null, total: 0 } };
    });
    vi.stubGlobal('fetch', fetch.fn);
    renderWithProviders(<ContactsTab />);
    await waitFor(() => expect(screen.getByTestId('segment-live-count').textContent).toBe('20 contacts match'));
    await userEvent.type(screen.getByLabelText('Any of tags'), 'vip');
    await waitFor(() => expect(screen.getByTestId('segment-live-count').textContent).toBe('12 contacts match'));
    expect(previews.at(-1)).toEqual({ rule: { tags: { anyOf: ['vip'] } } });
    await userEvent.type(screen.getByLabelText('Segment name'), 'VIPs');
    await userEvent.click(screen.getByRole('button', { name: 'Save segment' }));
    await waitFor(() =>
      expect(fetch.calls.find((c) => c.method === 'POST' && c.url.pathname === '/api/segments')?.body).toEqual({
        name: 'VIPs',
        rule: { tags: { anyOf: ['vip'] } },
      }),
    );
  }, 30_000);
});

describe('Contacts tab: import a file', () => {
  it('imports a CSV through the column mapping: name, tags and the other columns as fields', async () => {
    const posted: unknown[] = [];
    const fetch = fakeFetch((method, url, body) => {
      if (url.pathname === '/api/contacts/import' && method === 'POST') {
        posted.push(body);
        return { body: { created: 2, updated: 0, invalid: 0, duplicates: 0, invalidRows: [] } };
      }
      if (url.pathname === '/api/segments') return { body: { segments: [] } };
      return { body: { contacts: [], nextCursor: null, total: 0 } };
    });
    vi.stubGlobal('fetch', fetch.fn);
    renderWithProviders(<ContactsTab />);
    await userEvent.upload(
      screen.getByLabelText('Upload contacts file'),
      new File(['phone,name,tags,city\n91234567,Ann,vip;new,Sha Tin\n61234567,Ben,,\nabc,Bad,,\n'], 'book.csv', {
        type: 'text/csv',
      }),
    );
    await userEvent.click(await screen.findByRole('button', { name: 'Use 2 contacts' }));
    expect(await screen.findByText('book.csv: 2 created, 0 updated, 0 invalid, 0 duplicates')).toBeTruthy();
    expect(posted).toEqual([
      {
        rows: [
          { phone: '91234567', name: 'Ann', tags: ['vip', 'new'], fields: { city: 'Sha Tin' } },
          { phone: '61234567', name: 'Ben' },
        ],
        tags: [],
      },
    ]);
  }, 30_000);
});

describe('Contacts tab: segments and bulk changes', () => {
  it('shows a segment, tags the ticked contacts and deletes the whole segment after a confirm', async () => {
    const fetch = fakeFetch((method, url) => {
      if (url.pathname === '/api/segments')
        return {
          body: { segments: [{ id: 'seg-1', name: 'VIPs', rule: { tags: { anyOf: ['vip'] } }, createdAt: '' }] },
        };
      if (url.pathname === '/api/segments/seg-1/count') return { body: { count: 1 } };
      if (url.pathname === '/api/contacts/bulk' && method === 'POST') return { body: { affected: 1 } };
      const contacts =
        url.searchParams.get('segmentId') === 'seg-1'
          ? [contact('91234567', 'Ann', ['vip'])]
          : [contact('91234567', 'Ann', ['vip']), contact('92345678', 'Ben', [])];
      return { body: { contacts, nextCursor: null, total: contacts.length } };
    });
    vi.stubGlobal('fetch', fetch.fn);
    vi.stubGlobal('confirm', () => true);
    renderWithProviders(<ContactsTab />);
    expect(await screen.findByText('Ben')).toBeTruthy();
    await userEvent.click(screen.getByLabelText('Select 92345678'));
    await userEvent.type(screen.getByLabelText('Tags to add or remove'), 'promo');
    await userEvent.click(screen.getByRole('button', { name: 'Add tags' }));
    await waitFor(() => {
      const call = fetch.calls.find((c) => c.url.pathname === '/api/contacts/bulk');
      expect(call?.body).toEqual({ action: 'tag', tags: ['promo'], ids: ['id-92345678'] });
    });
    await userEvent.selectOptions(await screen.findByLabelText('Segment filter'), 'seg-1');
    await waitFor(() => expect(screen.queryByText('Ben')).toBeNull());
    expect(screen.getByText(/every contact of the segment/)).toBeTruthy();
    await userEvent.click(screen.getByRole('button', { name: 'Delete' }));
    await waitFor(() => {
      const calls = fetch.calls.filter((c) => c.url.pathname === '/api/contacts/bulk');
      expect(calls[1]?.body).toEqual({ action: 'delete', segmentId: 'seg-1' });
    });
  }, 30_000);
});

describe('Inbox tab', () => {
  it('answers with an attachment: uploaded first, sent with the text as its caption, then cleared', async () => {
    vi.stubGlobal('URL', Object.assign(URL, { createObjectURL: vi.fn(() => 'blob:thumb'), revokeObjectURL: vi.fn() }));
    const fetch = fakeFetch((method, url) => {
      if (url.pathname === '/api/conversations')
        return {
          body: {
            conversations: [
              {
                phone: '91234567',
                name: 'Ann',
                unread: 0,
                lastMessage: { direction: 'in', text: 'Menu?', at: '2026-01-01T00:00:00.000Z' },
              },
            ],
          },
        };
      if (url.pathname === '/api/media' && method === 'POST')
        return {
          status: 201,
          body: {
            success: true,
            mediaId: 'med_menu',
            kind: 'image',
            size: 4096,
            sha256: 'a'.repeat(64),
            fileName: 'menu.png',
            mime: 'image/png',
            createdAt: '2026-12-02T00:00:00.000Z',
          },
        };
      if (method === 'POST') return { status: 202, body: { id: 'job-2' } };
      return { body: { messages: [{ direction: 'in', text: 'Menu?', at: '2026-01-01T00:01:00.000Z' }] } };
    });
    vi.stubGlobal('fetch', fetch.fn);
    renderWithProviders(<InboxTab />);
    await userEvent.click(await screen.findByRole('button', { name: /Ann/ }));
    const thread = await screen.findByRole('region', { name: 'Conversation with 91234567' });
    await userEvent.upload(
      within(thread).getByTestId('attachment-input'),
      new File([new Uint8Array(4096)], 'menu.png', { type: 'image/png' }),
    );
    expect(await within(thread).findByText('menu.png')).toBeTruthy();
    await userEvent.type(within(thread).getByLabelText('Answer'), 'Here it is');
    await userEvent.click(within(thread).getByRole('button', { name: 'Send answer' }));
    await waitFor(() =>
      expect(
        fetch.calls.find((c) => c.method === 'POST' && c.url.pathname === '/api/conversations/91234567/messages')?.body,
      ).toEqual({ text: 'Here it is', mediaId: 'med_menu' }),
    );
    // Sent: the box and the attachment are cleared for the next answer.
    await waitFor(() => expect(within(thread).queryByText('menu.png')).toBeNull());
    expect((within(thread).getByLabelText('Answer') as HTMLTextAreaElement).value).toBe('');
  });

  it('shows unread replies first, opens a thread and sends an answer', async () => {
    const fetch = fakeFetch((method, url, body) => {
      if (url.pathname === '/api/conversations')
        return {
          body: {
            conversations: [
              {
                phone: '91234567',
                name: 'Ann',
                unread: 1,
                lastMessage: { direction: 'in', text: 'Can I come tomorrow?', at: '2026-01-01T00:00:00.000Z' },
              },
            ],
          },
        };
      if (url.pathname.endsWith('/unread')) return { body: { phone: '91234567', unread: 1 } };
      if (method === 'POST') {
        expect(body).toEqual({ text: 'Sure' });
        return { status: 202, body: { id: 'job-1' } };
      }
      return {
        body: {
          messages: [
            { direction: 'out', text: 'Sale today', at: '2026-01-01T00:00:00.000Z', status: 'read' },
            { direction: 'in', text: 'Can I come tomorrow?', at: '2026-01-01T00:01:00.000Z' },
          ],
        },
      };
    });
    vi.stubGlobal('fetch', fetch.fn);
    renderWithProviders(<InboxTab />);
    await userEvent.click(await screen.findByRole('button', { name: /Ann/ }));
    expect(await screen.findByText('Sale today')).toBeTruthy();
    await userEvent.type(screen.getByLabelText('Answer'), 'Sure');
    await userEvent.click(screen.getByRole('button', { name: 'Send answer' }));
    await waitFor(() =>
      expect(
        fetch.calls.some((c) => c.method === 'POST' && c.url.pathname === '/api/conversations/91234567/messages'),
      ).toBe(true),
    );
    // Mark unread closes the thread (opening it again would read it) and tells the server.
    await userEvent.click(screen.getByRole('button', { name: 'Mark unread' }));
    await waitFor(() =>
      expect(
        fetch.calls.some((c) => c.method === 'POST' && c.url.pathname === '/api/conversations/91234567/unread'),
      ).toBe(true),
    );
    expect(screen.queryByRole('region', { name: 'Conversation with 91234567' })).toBeNull();
  });
});
