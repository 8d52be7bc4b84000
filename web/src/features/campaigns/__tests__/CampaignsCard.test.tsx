import { act, screen, waitFor } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ACCOUNT_MESSAGES, RESULTS_MESSAGES, type JobHistoryItem } from '@bns/contracts';
import { connectedState, fakeFetch, renderWithProviders } from '../../../test/renderWithProviders.js';
import { jobProgressEvent } from '../../job/slice.js';
import { CampaignsCard } from '../CampaignsCard.js';

const job = (over: Partial<JobHistoryItem>): JobHistoryItem => ({
  jobId: 'job-1',
  status: 'completed',
  createdAt: '2025-01-01T00:00:00.000Z',
  startedAt: '2025-01-01T00:00:01.000Z',
  finishedAt: '2025-01-01T00:10:00.000Z',
  progress: { total: 3, sent: 2, failed: 1 },
  receipts: { delivered: 2, read: 1, replied: 1 },
  messagePreview: 'Hi {{name}}',
  message: 'Hi {{name}}',
  personalised: true,
  detailsPurgedAfterDays: null,
  ...over,
});

afterEach(() => vi.unstubAllGlobals());

describe('Campaigns card', () => {
  it("says when a campaign's details were removed by the retention setting, and keeps its counts", async () => {
    const server = fakeFetch((_m, url) =>
      url.pathname === '/api/jobs/user_test_1'
        ? {
            body: {
              success: true,
              jobs: [job({ messagePreview: '', message: '', detailsPurgedAfterDays: 90 })],
              nextCursor: null,
            },
          }
        : { status: 404, body: {} },
    );
    vi.stubGlobal('fetch', server.fn);
    renderWithProviders(<CampaignsCard />, { preloadedState: connectedState() });
    expect(await screen.findByText('Details removed after 90 days')).toBeTruthy();
    expect(ACCOUNT_MESSAGES.detailsPurged(90)).toBe('Details removed after 90 days');
    expect(screen.getByText('Sent 2')).toBeTruthy();
    expect(screen.queryByRole('button', { name: 'Open report' })).toBeNull();
    expect(screen.queryByRole('button', { name: 'Send again' })).toBeNull();
  });

  it('lists the jobs with their counts and receipts, and Send again loads message and recipients into the sender', async () => {
    const server = fakeFetch((_m, url) => {
      if (url.pathname === '/api/jobs/user_test_1')
        return {
          body: {
            success: true,
            jobs: [job({}), job({ jobId: 'job-0', messagePreview: 'Older', status: 'cancelled' })],
            nextCursor: null,
          },
        };
      if (url.pathname === '/job-results/job-1') {
        return {
          body: {
            success: true,
            results: [
              {
                phoneNumber: '91234567',
                variables: { name: 'Ann' },
                status: 'read',
                sentAt: null,
                deliveredAt: null,
                readAt: null,
                repliedAt: null,
              },
              {
                phoneNumber: '61234567',
                variables: { name: 'Bo' },
                status: 'failed',
                error: 'x',
                sentAt: null,
                deliveredAt: null,
                readAt: null,
                repliedAt: null,
              },
              {
                phoneNumber: '51234567',
                status: 'skipped',
                error: 'opted_out',
                sentAt: null,
                deliveredAt: null,
                readAt: null,
                repliedAt: null,
              },
            ],
            nextCursor: null,
          },
        };
      }
      return { status: 404, body: { success: false, error: 'Not found' } };
    });
    vi.stubGlobal('fetch', server.fn);
    const user = userEvent.setup();
    const { store } = renderWithProviders(<CampaignsCard />, {
      preloadedState: { ...connectedState(), ui: { activeTab: 'dashboard' } },
    });

    expect(await screen.findByText('Older')).toBeTruthy();
    const items = screen.getAllByTestId('campaign');
    expect(items).toHaveLength(2);
    expect(items[0]!.textContent).toContain('Sent 2');
    expect(items[0]!.textContent).toContain('Failed 1');
    expect(screen.getAllByTestId('count-replied')[0]!.textContent).toBe('1');
    expect(screen.getAllByRole('button', { name: 'Export CSV' })).toHaveLength(2);

    await user.click(screen.getAllByRole('button', { name: 'Send again' })[0]!);
    await waitFor(() => expect(store.getState().sender.phoneNumbers).toEqual(['91234567', '61234567']));
    expect(store.getState().sender.message).toBe('Hi {{name}}');
    expect(store.getState().sender.variables['61234567']).toEqual({ name: 'Bo' });
    expect(store.getState().ui.activeTab).toBe('send');
    expect(await screen.findByText(RESULTS_MESSAGES.campaignLoaded)).toBeTruthy();
    // The opted-out number is left out with a note (not a "missing value for {{name}}").
    expect(await screen.findByText(RESULTS_MESSAGES.sendAgainOptedOutLeft(1))).toBeTruthy();
  });

  it('Follow up saves the not-read segment of the campaign and loads its contacts into the sender', async () => {
    const created: unknown[] = [];
    const server = fakeFetch((method, url, body) => {
      if (url.pathname === '/api/jobs/user_test_1')
        return { body: { success: true, jobs: [job({})], nextCursor: null } };
      if (url.pathname === '/api/segments' && method === 'POST') {
        created.push(body);
        return { status: 201, body: { id: 'seg-f' } };
      }
      if (url.pathname === '/api/segments') return { body: { segments: [] } };
      if (url.pathname === '/api/segments/seg-f/members')
        return {
          body: {
            recipients: [{ phone: '61234567', variables: { name: 'Bo' } }],
            nextCursor: null,
            asOf: '2025-01-02T00:00:00.000Z',
          },
        };
      return { status: 404, body: { success: false, error: 'Not found' } };
    });
    vi.stubGlobal('fetch', server.fn);
    const user = userEvent.setup();
    const { store } = renderWithProviders(<CampaignsCard />, {
      preloadedState: { ...connectedState(), ui: { activeTab: 'dashboard' } },
    });
    await user.selectOptions(await screen.findByLabelText('Follow up'), 'notRead');
    await waitFor(() => expect(store.getState().sender.phoneNumbers).toEqual(['61234567']));
    expect(created).toEqual([
      {
        name: 'Follow-up (not read): 2025-01-01 Hi {{name}}',
        rule: {
          facts: [
            { fact: 'messaged', jobId: 'job-1' },
            { fact: 'read', jobId: 'job-1', value: false },
          ],
        },
      },
    ]);
    expect(store.getState().sender.variables['61234567']).toEqual({ name: 'Bo' });
    expect(store.getState().sender.message).toBe('');
    expect(store.getState().ui.activeTab).toBe('send');
  });

  it('shows a paperclip and the file name for a campaign sent with an attachment', async () => {
    const attachment = { mediaId: 'med_menu', kind: 'document' as const, fileName: 'menu.pdf', size: 2048 };
    vi.stubGlobal(
      'fetch',
      fakeFetch(() => ({
        body: {
          success: true,
          jobs: [job({ attachment }), job({ jobId: 'job-0', messagePreview: 'Text only' })],
          nextCursor: null,
        },
      })).fn,
    );
    renderWithProviders(<CampaignsCard />, { preloadedState: connectedState() });
    const badges = await screen.findAllByTestId('campaign-attachment');
    expect(badges.map((b) => b.textContent?.trim())).toEqual(['📎 menu.pdf']);
  });

  it('Send again brings the attachment along while it is stored', async () => {
    const attachment = { mediaId: 'med_menu', kind: 'document' as const, fileName: 'menu.pdf', size: 2048 };
    vi.stubGlobal(
      'fetch',
      fakeFetch((_m, url) => {
        if (url.pathname === '/api/jobs/user_test_1')
          return { body: { success: true, jobs: [job({ attachment, personalised: false })], nextCursor: null } };
        if (url.pathname === '/job-results/job-1')
          return {
            body: {
              success: true,
              results: [
                {
                  phoneNumber: '91234567',
                  status: 'read',
                  sentAt: null,
                  deliveredAt: null,
                  readAt: null,
                  repliedAt: null,
                },
              ],
              nextCursor: null,
            },
          };
        if (url.pathname === '/api/media/med_menu')
          return {
            body: {
              success: true,
              ...attachment,
              sha256: 'c'.repeat(64),
              mime: 'application/pdf',
              createdAt: '2025-01-01T00:00:00.000Z',
            },
          };
        return { status: 404, body: {} };
      }).fn,
    );
    const user = userEvent.setup();
    const { store } = renderWithProviders(<CampaignsCard />, { preloadedState: connectedState() });
    await user.click(await screen.findByRole('button', { name: 'Send again' }));
    await waitFor(() => expect(store.getState().sender.attachment).toMatchObject(attachment));
    expect(store.getState().sender.phoneNumbers).toEqual(['91234567']);
  });

  it('says so when there are no campaigns yet', async () => {
    vi.stubGlobal('fetch', fakeFetch(() => ({ body: { success: true, jobs: [], nextCursor: null } })).fn);
    renderWithProviders(<CampaignsCard />, { preloadedState: connectedState() });
    expect(await screen.findByText(RESULTS_MESSAGES.noCampaigns)).toBeTruthy();
  });

  it('follows running jobs from the socket, reads the list again when one ends, and Refresh reads it again', async () => {
    let finished = false;
    const server = fakeFetch((_m, url) => {
      if (url.pathname === '/api/jobs/user_test_1') {
        const running = job({
          status: 'running',
          finishedAt: null,
          progress: { total: 7, sent: 2, failed: 0 },
          receipts: { delivered: 0, read: 0, replied: 0 },
        });
        return {
          body: {
            success: true,
            jobs: [finished ? job({ status: 'completed', progress: { total: 7, sent: 7, failed: 0 } }) : running],
            nextCursor: null,
          },
        };
      }
      return { status: 404, body: { success: false, error: 'Not found' } };
    });
    vi.stubGlobal('fetch', server.fn);
    const user = userEvent.setup();
    const { store } = renderWithProviders(<CampaignsCard />, { preloadedState: connectedState() });
    const item = await screen.findByTestId('campaign');
    expect(item.textContent).toContain('Sent 2');
    const reads = () => server.calls.filter((c) => c.url.pathname === '/api/jobs/user_test_1').length;
    const before = reads();

    // A progress event of this job (from any tab of the user) moves the counts without a request
    // (RTK Query's patches reach the components on the next tick: auto-batched).
    await act(async () => {
      store.dispatch(
        jobProgressEvent({ jobId: 'job-1', status: 'running', progress: { total: 7, sent: 4, failed: 0 } }),
      );
    });
    await waitFor(() => expect(screen.getByTestId('campaign').textContent).toContain('Sent 4'), { timeout: 1000 });
    expect(reads()).toBe(before);

    // Its end reads the list again: status, finish time and receipts as the server has them.
    finished = true;
    await act(async () => {
      store.dispatch(
        jobProgressEvent({ jobId: 'job-1', status: 'completed', progress: { total: 7, sent: 7, failed: 0 } }),
      );
    });
    await waitFor(() =>
      expect(screen.getByTestId('campaign').querySelector('.status-pill')?.textContent).toBe('completed'),
    );
    expect(reads()).toBe(before + 1);

    await user.click(await screen.findByRole('button', { name: 'Refresh' }));
    await waitFor(() => expect(reads()).toBe(before + 2));
  });
});
