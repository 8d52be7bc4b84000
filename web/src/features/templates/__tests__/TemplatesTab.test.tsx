import { act, fireEvent, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { LIMITS, MESSAGES, TEMPLATE_MESSAGES, TemplatesErrorCode, WEB_MESSAGES, type Template } from '@bns/contracts';
import { initialJobState } from '../../job/slice.js';
import { startSending } from '../../job/thunks.js';
import { messageChanged, recipientsImported } from '../../sender/slice.js';
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
    expect(screen.getByRole('button', { name: 'Remove Promo from favorites' }).getAttribute('aria-pressed')).toBe(
      'true',
    );
    const put = server.calls.find((c) => c.method === 'PUT')!;
    expect(put.url.pathname).toBe('/api/templates/user_test_1/t1');
    expect(put.body).toEqual({ is_favorite: true });
    expect(put.url).toBeTruthy();

    release();
    expect(await screen.findByText(MESSAGES.failedToUpdateFavorite)).toBeTruthy();
    // The toast and the rollback land in separate renders: wait for the star, don't sample it once.
    expect((await screen.findByRole('button', { name: 'Add Promo to favorites' })).getAttribute('aria-pressed')).toBe(
      'false',
    );
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
    expect(server.calls.find((c) => c.method === 'POST')!.body).toMatchObject({
      name: 'Promo (Copy)',
      is_favorite: false,
    });
    release();
    expect(await screen.findByText(MESSAGES.failedToDuplicateTemplate)).toBeTruthy();
    // The toast and the rollback land in separate renders: wait for the copy to go.
    await waitFor(() => expect(screen.queryByRole('article', { name: 'Promo (Copy)' })).toBeNull());
  });

  describe('at the limit of templates a user keeps', () => {
    const full = {
      status: 409,
      body: { success: false, error: TEMPLATE_MESSAGES.limitReached, code: TemplatesErrorCode.LimitReached },
    };
    const serverAtLimit = () =>
      fakeFetch(async (method, url) => {
        if (url.pathname.endsWith('/stats')) return { body: stats };
        if (method === 'GET') return { body: { success: true, templates: [tpl({})] } };
        return full;
      });

    it('a refused save says why in plain words, and the form stays open', async () => {
      const server = serverAtLimit();
      vi.stubGlobal('fetch', server.fn);
      const user = userEvent.setup();
      renderWithProviders(<TemplatesTab />, { preloadedState: connectedState() });
      await user.click(screen.getByRole('button', { name: '+ New Template' }));
      const dialog = screen.getByRole('dialog', { name: 'Create Template' });
      await user.type(within(dialog).getByLabelText(/Template name/), 'One more');
      await user.type(within(dialog).getByLabelText(/Message content/), 'Hello');
      await user.click(within(dialog).getByRole('button', { name: 'Create Template' }));
      expect(
        await screen.findByText(`${MESSAGES.failedToSaveTemplate}: ${TEMPLATE_MESSAGES.limitReached}`),
      ).toBeTruthy();
      expect(TEMPLATE_MESSAGES.limitReached).toBe(
        `You can keep up to ${LIMITS.templatesPerUserMax} templates. Delete one to add another.`,
      );
      expect(screen.getByRole('dialog', { name: 'Create Template' })).toBeTruthy();
    });

    it('a refused duplicate says why in plain words and takes the copy away', async () => {
      const server = serverAtLimit();
      vi.stubGlobal('fetch', server.fn);
      const user = userEvent.setup();
      renderWithProviders(<TemplatesTab />, { preloadedState: connectedState() });
      await user.click(await screen.findByRole('button', { name: 'Duplicate Promo' }));
      expect(
        await screen.findByText(`${MESSAGES.failedToDuplicateTemplate}: ${TEMPLATE_MESSAGES.limitReached}`),
      ).toBeTruthy();
      await waitFor(() => expect(screen.queryByRole('article', { name: 'Promo (Copy)' })).toBeNull());
    });
  });

  it('saving the same new template again after an error sends the same Idempotency-Key (no second copy); changed content gets a new key', async () => {
    const server = fakeFetch(async (method, url) => {
      if (url.pathname.endsWith('/stats')) return { body: stats };
      if (method === 'GET') return { body: { success: true, templates: [] } };
      return { status: 503, body: { success: false, error: MESSAGES.serviceUnavailable, code: 'SERVICE_UNAVAILABLE' } };
    });
    vi.stubGlobal('fetch', server.fn);
    const user = userEvent.setup();
    renderWithProviders(<TemplatesTab />, { preloadedState: connectedState() });
    await user.click(screen.getByRole('button', { name: '+ New Template' }));
    const dialog = screen.getByRole('dialog', { name: 'Create Template' });
    await user.type(within(dialog).getByLabelText(/Template name/), 'Promo');
    await user.type(within(dialog).getByLabelText(/Message content/), 'Hello');
    const create = within(dialog).getByRole('button', { name: 'Create Template' });
    const posts = () => server.calls.filter((c) => c.method === 'POST').map((c) => c.headers.get('Idempotency-Key'));
    await user.click(create);
    await waitFor(() => expect(posts()).toHaveLength(1));
    await user.click(create);
    await waitFor(() => expect(posts()).toHaveLength(2));
    expect(posts()[0]).toMatch(/^[\x21-\x7e]{1,200}$/);
    expect(posts()[1]).toBe(posts()[0]);
    await user.type(within(dialog).getByLabelText(/Message content/), '!');
    await user.click(create);
    await waitFor(() => expect(posts()).toHaveLength(3));
    expect(posts()[2]).not.toBe(posts()[0]);
  });

  it('fetches once the filters have been still for 300 ms, never for the states in between', async () => {
    const server = fakeFetch(async (_m, url) =>
      url.pathname.endsWith('/stats')
        ? { body: stats }
        : url.pathname.endsWith('/categories')
          ? { body: { success: true, categories: [{ category: 'business', count: 1 }] } }
          : { body: { success: true, templates: [] } },
    );
    vi.stubGlobal('fetch', server.fn);
    renderWithProviders(<TemplatesTab />, { preloadedState: connectedState() });
    const lists = () => server.calls.filter((c) => c.url.pathname === '/api/templates/user_test_1');
    await waitFor(() => expect(lists()).toHaveLength(1));

    await screen.findByRole('option', { name: 'Business (1)' });
    // Both changes at once (a slow machine must not let 300 ms pass between them).
    fireEvent.change(screen.getByLabelText('Category'), { target: { value: 'business' } });
    fireEvent.click(screen.getByLabelText('Favorites Only'));
    const lastChange = Date.now();
    expect(lists()).toHaveLength(1);
    await waitFor(() => expect(lists()).toHaveLength(2));
    expect(lists()[1]!.url.search).toBe('?category=business&is_favorite=true');
    expect(lists()[1]!.at - lastChange).toBeGreaterThanOrEqual(LIMITS.templateFetchDebounceMs - 20);
    await new Promise((r) => setTimeout(r, 400));
    expect(lists()).toHaveLength(2);
  });

  it('validates the form with the spec messages', async () => {
    const server = fakeFetch(async (_m, url) =>
      url.pathname.endsWith('/stats') ? { body: stats } : { body: { success: true, templates: [] } },
    );
    vi.stubGlobal('fetch', server.fn);
    const user = userEvent.setup();
    renderWithProviders(<TemplatesTab />, { preloadedState: connectedState() });
    await user.click(screen.getByRole('button', { name: '+ New Template' }));
    const dialog = screen.getByRole('dialog', { name: 'Create Template' });
    await user.type(within(dialog).getByLabelText(/Phone numbers/), '1234{Enter}91234567{Enter}91234567');
    await user.click(within(dialog).getByRole('button', { name: 'Create Template' }));
    expect(within(dialog).getByText(MESSAGES.templateNameRequired)).toBeTruthy();
    expect(within(dialog).getByText(MESSAGES.messageContentRequired)).toBeTruthy();
    expect(within(dialog).getByText(`${MESSAGES.phoneNumberInvalid}. Invalid phone numbers: 1234`)).toBeTruthy();
    expect(await screen.findByText(MESSAGES.fixFormErrors)).toBeTruthy();
    expect(server.calls.some((c) => c.method === 'POST')).toBe(false);
  });

  it('the delete confirm quotes the template name', async () => {
    const server = fakeFetch((_m, url) =>
      url.pathname.endsWith('/stats')
        ? { body: stats }
        : { body: { success: true, templates: [tpl({ name: 'Promo copy' })] } },
    );
    vi.stubGlobal('fetch', server.fn);
    const user = userEvent.setup();
    renderWithProviders(<TemplatesTab />, { preloadedState: connectedState() });
    await user.click(await screen.findByRole('button', { name: 'Delete Promo copy' }));
    expect(
      within(screen.getByRole('dialog', { name: 'Delete template' })).getByText(/cannot be undone/).textContent,
    ).toBe('Delete “Promo copy”? This cannot be undone.');
  });

  it('Use needs phone numbers', async () => {
    const server = fakeFetch(async (_m, url) =>
      url.pathname.endsWith('/stats')
        ? { body: stats }
        : { body: { success: true, templates: [tpl({ phone_numbers: [] })] } },
    );
    vi.stubGlobal('fetch', server.fn);
    const user = userEvent.setup();
    renderWithProviders(<TemplatesTab />, { preloadedState: connectedState() });
    await user.click(await screen.findByRole('button', { name: 'Use Promo' }));
    expect(await screen.findByText(MESSAGES.noPhoneNumbersInTemplate)).toBeTruthy();
    expect(screen.queryByRole('dialog')).toBeNull();
  });

  it('the category filter offers the categories the user has (not the empty ones), with their counts, from the categories call', async () => {
    const server = fakeFetch(async (_m, url) =>
      url.pathname.endsWith('/stats')
        ? { body: stats }
        : url.pathname.endsWith('/categories')
          ? {
              body: {
                success: true,
                categories: [
                  { category: 'general', count: 0 },
                  { category: 'marketing', count: 3 },
                  { category: 'personal', count: 1 },
                  { category: 'custom', count: 0 },
                ],
              },
            }
          : { body: { success: true, templates: [tpl({})] } },
    );
    vi.stubGlobal('fetch', server.fn);
    renderWithProviders(<TemplatesTab />, { preloadedState: connectedState() });
    await screen.findByRole('option', { name: 'Marketing (3)' });
    const options = within(screen.getByLabelText('Category'))
      .getAllByRole('option')
      .map((o) => [o.getAttribute('value'), o.textContent]);
    expect(options).toEqual([
      ['all', 'All categories'],
      ['marketing', 'Marketing (3)'],
      ['personal', 'Personal (1)'],
    ]);
    expect(server.calls.some((c) => c.url.pathname === '/api/templates/user_test_1/categories')).toBe(true);
  });

  it('shows categories without counts when the server gives none', async () => {
    const server = fakeFetch(async (_m, url) =>
      url.pathname.endsWith('/stats')
        ? { body: stats }
        : url.pathname.endsWith('/categories')
          ? { body: { success: true, categories: [{ category: 'custom' }] } }
          : { body: { success: true, templates: [] } },
    );
    vi.stubGlobal('fetch', server.fn);
    renderWithProviders(<TemplatesTab />, { preloadedState: connectedState() });
    expect(await screen.findByRole('option', { name: 'Custom' })).toBeTruthy();
  });

  describe('Use after a finished job', () => {
    const finishedJob = {
      ...initialJobState,
      phase: 'progress' as const,
      jobId: 'old-job',
      status: 'completed' as const,
      progress: { total: 2, sent: 2, failed: 0 },
      donationPromptShown: true,
    };
    const serverFor = (start: { status?: number; body: unknown }) =>
      fakeFetch(async (method, url) => {
        if (url.pathname.endsWith('/stats')) return { body: stats };
        if (url.pathname.endsWith('/categories')) return { body: { success: true, categories: [] } };
        if (url.pathname === '/start-bulk-messages') return start;
        if (url.pathname.endsWith('/use')) return { body: { success: true, template: tpl({ usage_count: 1 }) } };
        if (url.pathname.startsWith('/job-')) return { status: 404, body: { success: false, error: 'Job not found' } };
        if (method === 'GET')
          return { body: { success: true, templates: [tpl({ phone_numbers: ['91234567', '61234567'] })] } };
        return { status: 404, body: {} };
      });

    it('loads the template into a fresh send only on Send Messages, starts it, and only then counts the use', async () => {
      const server = serverFor({ body: { success: true, jobId: 'new-job', estimatedTime: 1 } });
      vi.stubGlobal('fetch', server.fn);
      const user = userEvent.setup();
      const { store } = renderWithProviders(<TemplatesTab />, {
        preloadedState: { ...connectedState(), job: finishedJob },
      });
      await user.click(await screen.findByRole('button', { name: 'Use Promo' }));
      // Nothing changes before the confirm: Cancel would leave everything as it was.
      expect(store.getState().job).toMatchObject({ phase: 'progress', jobId: 'old-job' });
      expect(store.getState().sender.phoneNumbers).toEqual([]);
      expect(server.calls.some((c) => c.url.pathname.endsWith('/use'))).toBe(false);
      const confirm = screen.getByRole('dialog', { name: 'Send “Promo”' });
      await user.click(within(confirm).getByRole('button', { name: 'Send Messages' }));
      await waitFor(() => expect(server.calls.some((c) => c.url.pathname.endsWith('/use'))).toBe(true));
      // The confirm's opt-outs check is a POST too (a read): not part of the send.
      const paths = server.calls
        .filter((c) => c.method === 'POST' && !c.url.pathname.endsWith('/check'))
        .map((c) => c.url.pathname);
      expect(paths).toEqual(['/start-bulk-messages', '/api/templates/user_test_1/t1/use']);
      expect(server.calls.find((c) => c.url.pathname === '/start-bulk-messages')!.body).toMatchObject({
        message: 'Sale *today*',
        phoneNumbers: ['91234567', '61234567'],
      });
      expect(store.getState().job).toMatchObject({ phase: 'progress', jobId: 'new-job' });
      expect(store.getState().ui.activeTab).toBe('send');
      store.listener.clearListeners();
    });

    it('Cancel leaves the sender exactly as it was', async () => {
      const server = serverFor({ body: { success: true, jobId: 'new-job', estimatedTime: 1 } });
      vi.stubGlobal('fetch', server.fn);
      const user = userEvent.setup();
      const { store } = renderWithProviders(<TemplatesTab />, { preloadedState: connectedState() });
      act(() => {
        store.dispatch(messageChanged('My own words for {{name}}'));
        store.dispatch(recipientsImported([{ phone: '51230001', variables: { name: 'Kim' }, row: 2 }]));
      });
      const before = store.getState().sender;
      await user.click(await screen.findByRole('button', { name: 'Use Promo' }));
      await user.click(
        within(screen.getByRole('dialog', { name: 'Send “Promo”' })).getByRole('button', { name: 'Cancel' }),
      );
      expect(screen.queryByRole('dialog')).toBeNull();
      expect(store.getState().sender).toBe(before);
      expect(server.calls.some((c) => c.url.pathname === '/start-bulk-messages')).toBe(false);
      store.listener.clearListeners();
    });

    it('a template with a {{variable}} cannot be sent from its confirm; Load into the sender loads it', async () => {
      const server = fakeFetch(async (method, url) => {
        if (url.pathname.endsWith('/stats')) return { body: stats };
        if (url.pathname.endsWith('/categories')) return { body: { success: true, categories: [] } };
        if (method === 'GET' && url.pathname === '/api/templates/user_test_1') {
          return {
            body: {
              success: true,
              templates: [
                tpl({ message_content: 'Hi {{name}}, your order is ready', phone_numbers: ['91234567', '61234567'] }),
              ],
            },
          };
        }
        return { status: 404, body: {} };
      });
      vi.stubGlobal('fetch', server.fn);
      const user = userEvent.setup();
      const { store } = renderWithProviders(<TemplatesTab />, { preloadedState: connectedState() });
      await user.click(await screen.findByRole('button', { name: 'Use Promo' }));
      const confirm = screen.getByRole('dialog', { name: 'Send “Promo”' });
      expect(within(confirm).getByRole('alert').textContent).toBe(WEB_MESSAGES.templateNeedsValues(['name']));
      expect((within(confirm).getByRole('button', { name: 'Send Messages' }) as HTMLButtonElement).disabled).toBe(true);
      await user.click(within(confirm).getByRole('button', { name: WEB_MESSAGES.openInSender }));
      expect(store.getState().sender).toMatchObject({
        message: 'Hi {{name}}, your order is ready',
        phoneNumbers: ['91234567', '61234567'],
        templateId: 't1',
      });
      expect(store.getState().ui.activeTab).toBe('send');
      expect(server.calls.some((c) => c.url.pathname === '/start-bulk-messages')).toBe(false);
      store.listener.clearListeners();
    });

    it('does not count a use when the send is refused', async () => {
      const server = serverFor({
        status: 400,
        body: { success: false, error: 'WhatsApp is not connected', code: 'NOT_LINKED' },
      });
      vi.stubGlobal('fetch', server.fn);
      const user = userEvent.setup();
      const { store } = renderWithProviders(<TemplatesTab />, {
        preloadedState: { ...connectedState(), job: finishedJob },
      });
      await user.click(await screen.findByRole('button', { name: 'Use Promo' }));
      await user.click(
        within(screen.getByRole('dialog', { name: 'Send “Promo”' })).getByRole('button', { name: 'Send Messages' }),
      );
      expect(await screen.findByText(/Error starting job: WhatsApp is not connected/)).toBeTruthy();
      expect(server.calls.some((c) => c.url.pathname.endsWith('/use'))).toBe(false);
      store.listener.clearListeners();
    });

    it('counts the use once when a refused template send is fixed and started from Step 1', async () => {
      let refuse = true;
      const server = fakeFetch(async (method, url) => {
        if (url.pathname.endsWith('/stats')) return { body: stats };
        if (url.pathname.endsWith('/categories')) return { body: { success: true, categories: [] } };
        if (url.pathname === '/start-bulk-messages') {
          return refuse
            ? { status: 400, body: { success: false, error: 'Message is too long', code: 'INVALID' } }
            : { body: { success: true, jobId: 'fixed-job', estimatedTime: 1 } };
        }
        if (url.pathname.endsWith('/use')) return { body: { success: true, template: tpl({ usage_count: 1 }) } };
        if (method === 'GET' && url.pathname === '/api/templates/user_test_1')
          return { body: { success: true, templates: [tpl({})] } };
        return { status: 404, body: { success: false, error: 'Not found' } };
      });
      vi.stubGlobal('fetch', server.fn);
      const user = userEvent.setup();
      const { store } = renderWithProviders(<TemplatesTab />, {
        preloadedState: { ...connectedState(), job: finishedJob },
      });
      await user.click(await screen.findByRole('button', { name: 'Use Promo' }));
      await user.click(
        within(screen.getByRole('dialog', { name: 'Send “Promo”' })).getByRole('button', { name: 'Send Messages' }),
      );
      expect(await screen.findByText(/Error starting job: Message is too long/)).toBeTruthy();
      expect(store.getState().sender.templateId).toBe('t1');

      // The user fixes the message in Step 1 and starts it there: the send came from the template.
      refuse = false;
      store.dispatch(messageChanged('Sale today'));
      await store.dispatch(startSending());
      await waitFor(() => expect(server.calls.filter((c) => c.url.pathname.endsWith('/use'))).toHaveLength(1));
      expect(store.getState().sender.templateId).toBeNull();
      store.listener.clearListeners();
    });

    it('is disabled, with the reason, while a job is still sending', async () => {
      const server = serverFor({ body: {} });
      vi.stubGlobal('fetch', server.fn);
      const { store } = renderWithProviders(<TemplatesTab />, {
        preloadedState: { ...connectedState(), job: { ...finishedJob, status: 'running', monitoring: false } },
      });
      const use = await screen.findByRole('button', { name: 'Use Promo' });
      expect((use as HTMLButtonElement).disabled).toBe(true);
      expect(document.getElementById(use.getAttribute('aria-describedby') ?? '')?.textContent).toBe(
        WEB_MESSAGES.useWhileSending,
      );
      store.listener.clearListeners();
    });
  });
});
