import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { LIMITS, MESSAGES, type Template } from '@bns/contracts';
import { connectedState, fakeFetch, renderWithProviders } from '../../../test/renderWithProviders.js';
import { TemplatesTab } from '../TemplatesTab.js';

const tpl = (over: Partial<Template>): Template => ({
  id: 't1',
  name: 'Promo',
  description: '',
  message_content: 'Sale *today*',
  phone_numbers: ['91234567', '61234567', '51234567', '41234567'],
  category: 'marketing',
  is_favorite: false,
  usage_count: 0,
  created_at: '2025-01-01T00:00:00Z',
  updated_at: '2025-01-01T00:00:00Z',
  ...over,
});

const stats = { success: true, stats: { total_templates: 1, favorite_templates: 0, categories: 1, total_usage: 0 } };

afterEach(() => {
  vi.unstubAllGlobals();
});

describe('Templates tab', () => {
  it('stars at once and rolls the star back with "Failed to update favorite status" when the server refuses', async () => {
    let release: () => void = () => undefined;
    const gate = new Promise<void>((r) => (release = r));
    const server = fakeFetch(async (method, url) => {
      if (url.pathname.endsWith('/stats')) return { body: stats };
      if (method === 'GET') return { body: { success: true, templates: [tpl({})] } };
      await gate;
      return { status: 500, body: { success: false, error: 'boom', code: 'INTERNAL' } };
    });
    vi.stubGlobal('fetch', server.fn);
    const user = userEvent.setup();
    renderWithProviders(<TemplatesTab />, { preloadedState: connectedState() });

    const star = await screen.findByRole('button', { name: 'Add Promo to favorites' });
    expect(within(screen.getByRole('article', { name: 'Promo' })).getByText('+1 more')).toBeTruthy();
    await user.click(star);
    // Optimistic: the star is on before the server answered.
    expect(screen.getByRole('button', { name: 'Remove Promo from favorites' }).getAttribute('aria-pressed')).toBe('true');
    const put = server.calls.find((c) => c.method === 'PUT')!;
    expect(put.url.pathname).toBe('/api/templates/user_test_1/t1');
    expect(put.body).toEqual({ is_favorite: true });
    expect(put.url).toBeTruthy();

    release();
    expect(await screen.findByText(MESSAGES.failedToUpdateFavorite)).toBeTruthy();
    expect(screen.getByRole('button', { name: 'Add Promo to favorites' }).getAttribute('aria-pressed')).toBe('false');
  });

  it('shows the copy at once on duplicate and removes it with "Failed to duplicate template" on refusal', async () => {
    let release: () => void = () => undefined;
    const gate = new Promise<void>((r) => (release = r));
    const server = fakeFetch(async (method, url) => {
      if (url.pathname.endsWith('/stats')) return { body: stats };
      if (method === 'GET') return { body: { success: true, templates: [tpl({})] } };
      await gate;
      return { status: 400, body: { success: false, error: 'Please fix the form errors', code: 'TEMPLATE_INVALID' } };
    });
    vi.stubGlobal('fetch', server.fn);
    const user = userEvent.setup();
    renderWithProviders(<TemplatesTab />, { preloadedState: connectedState() });
    await user.click(await screen.findByRole('button', { name: 'Duplicate Promo' }));
    expect(screen.getByRole('article', { name: 'Promo (Copy)' })).toBeTruthy();
    expect(server.calls.find((c) => c.method === 'POST')!.body).toMatchObject({ name: 'Promo (Copy)', is_favorite: false });
    release();
    expect(await screen.findByText(MESSAGES.failedToDuplicateTemplate)).toBeTruthy();
    expect(screen.queryByRole('article', { name: 'Promo (Copy)' })).toBeNull();
  });

  it('fetches once the filters have been still for 300 ms, never for the states in between', async () => {
    const server = fakeFetch(async (_m, url) => (url.pathname.endsWith('/stats') ? { body: stats } : { body: { success: true, templates: [] } }));
    vi.stubGlobal('fetch', server.fn);
    const user = userEvent.setup();
    renderWithProviders(<TemplatesTab />, { preloadedState: connectedState() });
    const lists = () => server.calls.filter((c) => c.url.pathname === '/api/templates/user_test_1');
    await waitFor(() => expect(lists()).toHaveLength(1));

    await user.selectOptions(screen.getByLabelText('Category'), 'business');
    await user.click(screen.getByLabelText('Favorites Only'));
    const lastChange = Date.now();
    expect(lists()).toHaveLength(1);
    await waitFor(() => expect(lists()).toHaveLength(2));
    expect(lists()[1]!.url.search).toBe('?category=business&is_favorite=true');
    expect(lists()[1]!.at - lastChange).toBeGreaterThanOrEqual(LIMITS.templateFetchDebounceMs - 20);
    await new Promise((r) => setTimeout(r, 400));
    expect(lists()).toHaveLength(2);
  });

  it('validates the form with the spec messages', async () => {
    const server = fakeFetch(async (_m, url) => (url.pathname.endsWith('/stats') ? { body: stats } : { body: { success: true, templates: [] } }));
    vi.stubGlobal('fetch', server.fn);
    const user = userEvent.setup();
    renderWithProviders(<TemplatesTab />, { preloadedState: connectedState() });
    await user.click(screen.getByRole('button', { name: '+ New Template' }));
    const dialog = screen.getByRole('dialog', { name: 'Create Template' });
    await user.type(within(dialog).getByLabelText(/Phone numbers/), '1234{Enter}91234567{Enter}91234567');
    await user.click(within(dialog).getByRole('button', { name: 'Create Template' }));
    expect(within(dialog).getByText(MESSAGES.templateNameRequired)).toBeTruthy();
    expect(within(dialog).getByText(MESSAGES.messageContentRequired)).toBeTruthy();
    expect(within(dialog).getByText(MESSAGES.phoneNumberInvalid)).toBeTruthy();
    expect(await screen.findByText(MESSAGES.fixFormErrors)).toBeTruthy();
    expect(server.calls.some((c) => c.method === 'POST')).toBe(false);
  });

  it('Use needs phone numbers', async () => {
    const server = fakeFetch(async (_m, url) =>
      url.pathname.endsWith('/stats') ? { body: stats } : { body: { success: true, templates: [tpl({ phone_numbers: [] })] } },
    );
    vi.stubGlobal('fetch', server.fn);
    const user = userEvent.setup();
    renderWithProviders(<TemplatesTab />, { preloadedState: connectedState() });
    await user.click(await screen.findByRole('button', { name: 'Use Promo' }));
    expect(await screen.findByText(MESSAGES.noPhoneNumbersInTemplate)).toBeTruthy();
    expect(screen.queryByRole('dialog')).toBeNull();
  });
});
