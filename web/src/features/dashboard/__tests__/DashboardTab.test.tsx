import { screen } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { LIMITS, MESSAGES, type DashboardData } from '@bns/contracts';
import { connectedState, fakeFetch, renderWithProviders } from '../../../test/renderWithProviders.js';
import { DashboardTab } from '../DashboardTab.js';
import { last12Months } from '../UsageChart.js';

const long = 'A'.repeat(LIMITS.dashboardContentPreview) + ' and the end of a long message';
const data: DashboardData = {
  messages: [
    {
      id: 'm1',
      job_id: 'j',
      recipient: '91234567',
      content: long,
      status: 'read',
      error: null,
      sent_at: '2025-01-01T00:00:00Z',
      created_at: '2025-01-01T00:00:00Z',
      replied_at: null,
      reply: null,
    },
    {
      id: 'm2',
      job_id: 'j',
      recipient: '55550000',
      content: 'short',
      status: 'failed',
      error: 'number is not on WhatsApp',
      sent_at: '2025-01-01T00:00:00Z',
      created_at: '2025-01-01T00:00:00Z',
      replied_at: null,
      reply: null,
    },
  ],
  sessions: [],
  usage: { messages_sent_count: 1, messages_failed_count: 1, messages_skipped_count: 2, monthly: [] },
  stats: {
    totalMessages: 2,
    successfulMessages: 1,
    failedMessages: 1,
    activeSessions: 1,
    repliedMessages: 0,
    skippedMessages: 3,
  },
  user: { id: 'user_test_1', preferences: { auto_login_message_enabled: true } },
};

afterEach(() => vi.unstubAllGlobals());

describe('Dashboard tab', () => {
  it('says "Error loading dashboard" with the reason, and Try Again loads it', async () => {
    let fail = true;
    const server = fakeFetch(async () =>
      fail
        ? { status: 503, body: { success: false, error: 'The service is temporarily unavailable' } }
        : { body: { success: true, data } },
    );
    vi.stubGlobal('fetch', server.fn);
    const user = userEvent.setup();
    renderWithProviders(<DashboardTab />, { preloadedState: connectedState() });
    expect(await screen.findByText(MESSAGES.errorLoadingDashboard)).toBeTruthy();
    expect(screen.getByText('The service is temporarily unavailable')).toBeTruthy();
    fail = false;
    await user.click(screen.getByRole('button', { name: MESSAGES.tryAgain }));
    expect(await screen.findByText('Recent messages')).toBeTruthy();
    expect(server.calls[0]!.url.pathname).toBe('/api/dashboard/user_test_1');
  });

  it('cuts content over 100 characters with Show more / Show less, and shows each status', async () => {
    vi.stubGlobal('fetch', fakeFetch(async () => ({ body: { success: true, data } })).fn);
    const user = userEvent.setup();
    renderWithProviders(<DashboardTab />, { preloadedState: connectedState() });
    const more = await screen.findByRole('button', { name: 'Show more' });
    expect(screen.getByText(`${'A'.repeat(LIMITS.dashboardContentPreview)}…`)).toBeTruthy();
    await user.click(more);
    expect(screen.getByText(long)).toBeTruthy();
    await user.click(screen.getByRole('button', { name: 'Show less' }));
    expect(screen.queryByText(long)).toBeNull();
    expect(screen.getByText('read')).toBeTruthy();
    expect(screen.getByText('failed')).toBeTruthy();
    expect(screen.getByText('number is not on WhatsApp')).toBeTruthy();
  });

  it('shows skipped recipients as an outcome of their own, all told and this month', async () => {
    vi.stubGlobal('fetch', fakeFetch(async () => ({ body: { success: true, data } })).fn);
    renderWithProviders(<DashboardTab />, { preloadedState: connectedState() });
    const label = await screen.findByText('Skipped');
    expect(label.parentElement?.querySelector('.stat-value')?.textContent).toBe('3');
    expect(screen.getByText(/This month: 1 sent, 1 failed, 2 skipped/)).toBeTruthy();
  });

  it('toggles the Auto-Login Success Message at once and sends the preference', async () => {
    const server = fakeFetch(async (method) =>
      method === 'POST'
        ? { body: { success: true, preferences: { auto_login_message_enabled: false } } }
        : { body: { success: true, data } },
    );
    vi.stubGlobal('fetch', server.fn);
    const user = userEvent.setup();
    renderWithProviders(<DashboardTab />, { preloadedState: connectedState() });
    const toggle = await screen.findByRole('switch', { name: 'Auto-Login Success Message' });
    expect(toggle.textContent).toContain('Enabled');
    await user.click(toggle);
    expect(toggle.getAttribute('aria-checked')).toBe('false');
    expect(toggle.textContent).toContain('Disabled');
    const post = server.calls.find((c) => c.method === 'POST')!;
    expect(post.url.pathname).toBe('/api/user/preferences');
    expect(post.body).toEqual({ clerkUserId: 'user_test_1', preferences: { auto_login_message_enabled: false } });
  });

  it('charts the last 12 months, zeros where there were no messages', () => {
    const months = last12Months([{ month: '2025-03', sent: 5, failed: 1 }], new Date('2025-03-15T00:00:00Z'));
    expect(months).toHaveLength(12);
    expect(months[0]!.month).toBe('2024-04');
    expect(months[11]).toEqual({ month: '2025-03', sent: 5, failed: 1 });
    expect(months[5]).toEqual({ month: '2024-09', sent: 0, failed: 0 });
  });
});
