import { fireEvent, screen, waitFor } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { RecipientResult } from '@bns/contracts';
import { fakeFetch, renderWithProviders } from '../../../test/renderWithProviders.js';
import { ReportList, ROW_HEIGHT } from '../ReportList.js';

const TOTAL = 5000;
const row = (i: number): RecipientResult => ({
  phoneNumber: String(60_000_000 + i),
  status: 'delivered',
  sentAt: '2025-01-01T00:00:00.000Z',
  deliveredAt: '2025-01-01T00:00:01.000Z',
  readAt: null,
  repliedAt: null,
});

/** The report as the gateway serves it: `limit` rows after the cursor (a list position). */
function reportServer(total = TOTAL) {
  return fakeFetch((_m, url) => {
    const after = Number(url.searchParams.get('cursor') ?? 0);
    const limit = Number(url.searchParams.get('limit') ?? 100);
    const end = Math.min(total, after + limit);
    const results = Array.from({ length: end - after }, (_, k) => row(after + k));
    return { body: { success: true, results, nextCursor: end < total ? String(end) : null } };
  });
}

afterEach(() => vi.unstubAllGlobals());

describe('ReportList (virtualised report list)', () => {
  it('keeps only the rows in view in the DOM, and pages through 5,000 recipients as the user scrolls', async () => {
    const server = reportServer();
    vi.stubGlobal('fetch', server.fn);
    renderWithProviders(
      <ReportList
        jobId="job-1"
        statuses={['sent', 'delivered', 'read', 'replied']}
        count={TOTAL}
        label="Successful"
        tone="success"
      />,
    );
    expect(await screen.findByText('60000000')).toBeTruthy();
    expect(screen.getByRole('heading', { name: 'Successful (5000)' })).toBeTruthy();
    const list = screen.getByRole('list', { name: 'Successful numbers' });
    expect(list.querySelectorAll('li').length).toBeLessThan(30);
    expect(server.calls[0]!.url.pathname).toBe('/job-results/job-1');
    expect(server.calls[0]!.url.searchParams.get('status')).toBe('sent,delivered,read,replied');

    // Scroll to the end: the pages in between are read in turn, the last rows show, the DOM stays small.
    const box = screen.getByTestId('report-success');
    for (let i = 0; i < 30 && !screen.queryByText(String(60_000_000 + TOTAL - 1)); i++) {
      box.scrollTop = TOTAL * ROW_HEIGHT;
      fireEvent.scroll(box);
      await waitFor(() => expect(list.getAttribute('aria-busy')).toBe('false'));
    }
    expect(await screen.findByText(String(60_000_000 + TOTAL - 1))).toBeTruthy();
    expect(list.querySelectorAll('li').length).toBeLessThan(30);
    const cursors = server.calls.map((c) => c.url.searchParams.get('cursor'));
    expect(new Set(cursors).size).toBe(cursors.length);
  });

  it('shows receipts as they come: a new receipt count re-reads the page, and statuses move on', async () => {
    let status: RecipientResult['status'] = 'sent';
    vi.stubGlobal(
      'fetch',
      fakeFetch(() => ({ body: { success: true, results: [{ ...row(0), status }], nextCursor: null } })).fn,
    );
    const view = renderWithProviders(
      <ReportList jobId="job-3" statuses={['sent', 'read']} count={1} label="Successful" tone="success" refresh={0} />,
    );
    expect(await screen.findByText('Sent')).toBeTruthy();
    status = 'read';
    view.rerender(
      <ReportList jobId="job-3" statuses={['sent', 'read']} count={1} label="Successful" tone="success" refresh={1} />,
    );
    expect(await screen.findByText('Read')).toBeTruthy();
  });

  it('shows the attachment every message carried on each row', async () => {
    vi.stubGlobal('fetch', reportServer(3).fn);
    renderWithProviders(
      <ReportList
        jobId="job-media"
        statuses={['delivered']}
        count={3}
        label="Successful"
        tone="success"
        attachment="menu.pdf"
      />,
    );
    await waitFor(() => expect(screen.getAllByTitle('Attachment: menu.pdf')).toHaveLength(3));
    expect(screen.getAllByTitle('Attachment: menu.pdf')[0]!.textContent).toContain('menu.pdf');
  });

  it('follows a running job: when the count grows past the last page, that page is read again', async () => {
    let total = 3;
    const server = fakeFetch((_m, url) => {
      const after = Number(url.searchParams.get('cursor') ?? 0);
      const results = Array.from({ length: Math.max(0, total - after) }, (_, k) => row(after + k));
      return { body: { success: true, results, nextCursor: null } };
    });
    vi.stubGlobal('fetch', server.fn);
    const view = renderWithProviders(
      <ReportList jobId="job-2" statuses={['failed']} count={3} label="Failed" tone="failed" />,
    );
    expect(await screen.findByText('60000002')).toBeTruthy();
    total = 5;
    view.rerender(<ReportList jobId="job-2" statuses={['failed']} count={5} label="Failed" tone="failed" />);
    expect(await screen.findByText('60000004')).toBeTruthy();
    expect(screen.getAllByText(/^6000000\d$/)).toHaveLength(5);
  });
});
