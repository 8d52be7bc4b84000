import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ACCOUNT_MESSAGES, type AuditEntry } from '@bns/contracts';
import { fakeFetch, renderWithProviders } from '../../../test/renderWithProviders.js';
import { AccountDataSection } from '../AccountDataSection.js';

afterEach(() => vi.unstubAllGlobals());

const entry = (kind: AuditEntry['kind'], at: string): AuditEntry => ({
  kind,
  at,
  actor: 'ann@shop.hk',
  address: '203.0.113.0/24',
  details: {},
});

describe('Account & data', () => {
  it('saves the retention choice, pages and filters the audit log', async () => {
    let days: number | null = 365;
    const server = fakeFetch((method, url, body) => {
      if (url.pathname === '/api/account/retention') {
        if (method === 'PUT') days = (body as { days: number | null }).days;
        return { body: { days } };
      }
      if (url.pathname === '/api/audit') {
        if (url.searchParams.get('kind') === 'auth.signed_in')
          return { body: { entries: [entry('auth.signed_in', '2026-01-01T00:00:00Z')], nextCursor: null } };
        if (url.searchParams.get('cursor') === 'c2')
          return { body: { entries: [entry('policy.changed', '2026-01-02T00:00:00Z')], nextCursor: null } };
        return { body: { entries: [entry('api_key.created', '2026-01-03T00:00:00Z')], nextCursor: 'c2' } };
      }
      return { status: 404, body: {} };
    });
    vi.stubGlobal('fetch', server.fn);
    const user = userEvent.setup();
    renderWithProviders(<AccountDataSection />);

    const select = await screen.findByLabelText(ACCOUNT_MESSAGES.retentionLabel);
    await waitFor(() => expect((select as HTMLSelectElement).value).toBe('365'));
    await user.selectOptions(select, ACCOUNT_MESSAGES.retentionForever);
    expect(await screen.findByText(ACCOUNT_MESSAGES.retentionSaved)).toBeTruthy();
    expect(server.calls.find((c) => c.method === 'PUT')!.body).toEqual({ days: null });

    const table = await screen.findByRole('table', { name: ACCOUNT_MESSAGES.auditTitle });
    expect(within(table).getByText('api_key.created')).toBeTruthy();
    expect(within(table).getByText('203.0.113.0/24')).toBeTruthy();
    await user.click(screen.getByRole('button', { name: 'Older' }));
    expect(await screen.findByRole('cell', { name: 'policy.changed' })).toBeTruthy();
    await user.click(screen.getByRole('button', { name: 'Newer' }));
    expect(await screen.findByRole('cell', { name: 'api_key.created' })).toBeTruthy();
    await user.selectOptions(screen.getByTestId('audit-kind'), 'auth.signed_in');
    expect(await screen.findByRole('cell', { name: 'auth.signed_in' })).toBeTruthy();
  });

  it('deletes the account only once the e-mail is typed, then shows each service and the confirmation', async () => {
    let polls = 0;
    const server = fakeFetch((method, url) => {
      if (url.pathname === '/api/account/retention') return { body: { days: 365 } };
      if (url.pathname === '/api/audit') return { body: { entries: [], nextCursor: null } };
      if (url.pathname === '/api/account' && method === 'DELETE')
        return { status: 202, body: { deletionId: 'd1', requestedAt: '2026-01-01T00:00:00Z' } };
      if (url.pathname === '/api/account/deletion') {
        polls += 1;
        const done = polls > 1;
        return {
          body: {
            deletionId: 'd1',
            status: done ? 'done' : 'running',
            requestedAt: '2026-01-01T00:00:00Z',
            finishedAt: done ? '2026-01-01T00:00:05Z' : null,
            services: { jobs: { status: 'done', rows: 12 }, templates: { status: done ? 'done' : 'running' } },
          },
        };
      }
      return { status: 404, body: {} };
    });
    vi.stubGlobal('fetch', server.fn);
    const user = userEvent.setup();
    renderWithProviders(<AccountDataSection />);
    const button = await screen.findByRole('button', { name: ACCOUNT_MESSAGES.deleteButton });
    expect((button as HTMLButtonElement).disabled).toBe(true);
    await user.type(screen.getByLabelText(ACCOUNT_MESSAGES.deleteConfirmLabel), 'someone@else.hk');
    expect((button as HTMLButtonElement).disabled).toBe(true);
    await user.clear(screen.getByLabelText(ACCOUNT_MESSAGES.deleteConfirmLabel));
    await user.type(screen.getByLabelText(ACCOUNT_MESSAGES.deleteConfirmLabel), 'Ann@Shop.hk');
    await user.click(button);
    expect(server.calls.find((c) => c.method === 'DELETE')!.body).toEqual({ email: 'Ann@Shop.hk' });
    expect(await screen.findByText('jobs: done (12 rows)')).toBeTruthy();
    expect(await screen.findByText(ACCOUNT_MESSAGES.deletionDone, {}, { timeout: 4000 })).toBeTruthy();
    expect(screen.getByText('templates: done')).toBeTruthy();
    expect(screen.getByRole('button', { name: 'Sign out' })).toBeTruthy();
  });
});
