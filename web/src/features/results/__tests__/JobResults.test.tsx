import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { RecipientResult } from '@bns/contracts';
import { connectedState, fakeFetch, renderWithProviders } from '../../../test/renderWithProviders.js';
import { JobResults } from '../JobResults.js';

const rows: RecipientResult[] = [
  {
    phoneNumber: '61000001',
    status: 'replied',
    sentAt: '2025-01-01T00:00:00.000Z',
    deliveredAt: '2025-01-01T00:00:01.000Z',
    readAt: '2025-01-01T00:00:02.000Z',
    repliedAt: '2025-01-01T00:01:00.000Z',
    replies: [
      { text: 'Yes, Friday works', at: '2025-01-01T00:01:00.000Z' },
      { text: '<b>thanks</b>', at: '2025-01-01T00:02:00.000Z' },
    ],
  },
  {
    phoneNumber: '61000002',
    status: 'delivered',
    sentAt: '2025-01-01T00:00:00.000Z',
    deliveredAt: '2025-01-01T00:00:01.000Z',
    readAt: null,
    repliedAt: null,
  },
];

/** The report as the gateway serves it: `q` keeps the numbers holding those digits. */
function server() {
  return fakeFetch((_m, url) => {
    if (url.pathname.startsWith('/api/jobs/')) return { body: { success: true, jobs: [], nextCursor: null } };
    const q = url.searchParams.get('q');
    return {
      body: { success: true, results: rows.filter((r) => !q || r.phoneNumber.includes(q)), nextCursor: null },
    };
  });
}

afterEach(() => vi.unstubAllGlobals());

describe('JobResults: replies and search', () => {
  it("shows a recipient's replies, as text, in a side panel", async () => {
    vi.stubGlobal('fetch', server().fn);
    const user = userEvent.setup();
    renderWithProviders(<JobResults jobId="j1" progress={{ total: 2, sent: 2, failed: 0 }} finished />, {
      preloadedState: connectedState(),
    });
    await user.click(await screen.findByRole('button', { name: 'Show replies from 61000001' }));
    const panel = screen.getByRole('complementary', { name: 'Replies from 61000001' });
    expect(within(panel).getByText('Yes, Friday works')).toBeTruthy();
    // A reply is the recipient's words, never markup.
    expect(within(panel).getByText('<b>thanks</b>')).toBeTruthy();
    expect(screen.queryByRole('button', { name: 'Show replies from 61000002' })).toBeNull();
    await user.click(within(panel).getByRole('button', { name: 'Close replies' }));
    expect(screen.queryByRole('complementary')).toBeNull();
  });

  it('searches by number on the server: the 852-prefixed form asks for the 8 digits', async () => {
    const s = server();
    vi.stubGlobal('fetch', s.fn);
    const user = userEvent.setup();
    renderWithProviders(<JobResults jobId="j1" progress={{ total: 2, sent: 2, failed: 0 }} finished />, {
      preloadedState: connectedState(),
    });
    await screen.findByText('61000002');
    await user.type(screen.getByLabelText('Search by number'), '+852 6100 0002');
    const found = await screen.findByRole('list', { name: 'Matching numbers numbers' });
    await waitFor(() => expect(within(found).getByText('61000002')).toBeTruthy());
    expect(within(found).queryByText('61000001')).toBeNull();
    const searches = s.calls.filter((c) => c.url.searchParams.has('q'));
    expect(searches.map((c) => c.url.searchParams.get('q'))).toEqual(['61000002']);
    await user.clear(screen.getByLabelText('Search by number'));
    await user.type(screen.getByLabelText('Search by number'), 'abc');
    expect(screen.getByRole('alert').textContent).toContain('q must be up to');
  });
});
