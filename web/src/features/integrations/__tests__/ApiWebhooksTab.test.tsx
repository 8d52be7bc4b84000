import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { INTEGRATIONS_MESSAGES, type ApiKey } from '@bns/contracts';
import { fakeFetch, renderWithProviders } from '../../../test/renderWithProviders.js';
import { ApiWebhooksTab } from '../ApiWebhooksTab.js';

const SECRET = `bns_${'x'.repeat(43)}`;

afterEach(() => {
  vi.unstubAllGlobals();
});

describe('API & Webhooks tab', () => {
  it('creates a key, shows its secret once with a copy button, then lists it by prefix', async () => {
    let keys: ApiKey[] = [];
    const server = fakeFetch(async (method, url, body) => {
      if (url.pathname === '/api/keys' && method === 'POST') {
        const { name, scopes } = body as { name: string; scopes: ApiKey['scopes'] };
        const key = {
          id: 'k1',
          name,
          scopes,
          prefix: SECRET.slice(0, 12),
          createdAt: '2026-01-01T00:00:00Z',
          lastUsedAt: null,
        };
        keys = [key];
        return { status: 201, body: { ...key, secret: SECRET } };
      }
      if (url.pathname === '/api/keys') return { body: { keys } };
      if (url.pathname === '/api/webhooks') return { body: { webhooks: [] } };
      return { status: 404, body: {} };
    });
    vi.stubGlobal('fetch', server.fn);
    const user = userEvent.setup();
    renderWithProviders(<ApiWebhooksTab />);
    expect(await screen.findByText('No API keys yet.')).toBeTruthy();
    await user.type(screen.getByLabelText('Key name'), 'Shop backend');
    await user.click(screen.getByRole('button', { name: 'Create key' }));
    const shown = await screen.findByRole('status', { name: 'New API key' });
    expect(within(shown).getByTestId('new-key-secret').textContent).toBe(SECRET);
    expect(within(shown).getByRole('button', { name: 'Copy' })).toBeTruthy();
    const post = server.calls.find((c) => c.method === 'POST')!;
    expect(post.body).toEqual({ name: 'Shop backend', scopes: ['messages:send', 'read'] });
    const list = await screen.findByRole('list', { name: 'API keys' });
    expect(within(list).getByText(`${SECRET.slice(0, 12)}…`)).toBeTruthy();
    await user.click(within(shown).getByRole('button', { name: 'Done' }));
    await waitFor(() => expect(screen.queryByTestId('new-key-secret')).toBeNull());
  });

  it('says why an endpoint was refused, and shows the notice of one disabled for failing', async () => {
    const server = fakeFetch(async (method, url) => {
      if (url.pathname === '/api/keys') return { body: { keys: [] } };
      if (url.pathname === '/api/webhooks' && method === 'POST')
        return {
          status: 400,
          body: { success: false, error: INTEGRATIONS_MESSAGES.webhookUrlRefused, code: 'WEBHOOK_URL_REFUSED' },
        };
      if (url.pathname === '/api/webhooks') {
        return {
          body: {
            webhooks: [
              {
                id: 'w1',
                url: 'https://shop.example/hook',
                events: ['message.sent'],
                description: '',
                enabled: false,
                disabledReason: 'failing',
                failingSince: '2026-01-01T00:00:00Z',
                previousSecretExpiresAt: null,
                createdAt: '2026-01-01T00:00:00Z',
              },
            ],
          },
        };
      }
      return { status: 404, body: {} };
    });
    vi.stubGlobal('fetch', server.fn);
    const user = userEvent.setup();
    renderWithProviders(<ApiWebhooksTab />);
    expect(await screen.findByText(INTEGRATIONS_MESSAGES.webhookDisabledFailing)).toBeTruthy();
    await user.type(screen.getByLabelText('Endpoint URL'), 'https://10.0.0.1/hook');
    await user.click(screen.getByRole('button', { name: 'Add endpoint' }));
    expect(await screen.findByText(INTEGRATIONS_MESSAGES.webhookUrlRefused)).toBeTruthy();
  });
});
