import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { DEFAULT_OPT_OUT_SETTINGS, OPT_OUT_MESSAGES, type OptOutEntry, type OptOutSettings } from '@bns/contracts';
import { fakeFetch, renderWithProviders } from '../../../test/renderWithProviders.js';
import { OPT_OUTS_PAGE, OptOutsCard, splitNumbers } from '../OptOutsCard.js';
import { OptOutsReviewNote } from '../OptOutsReviewNote.js';

afterEach(() => vi.unstubAllGlobals());

const entry = (phone: string, reason: OptOutEntry['reason'] = 'manual'): OptOutEntry => ({
  phoneNumber: phone,
  reason,
  at: '2025-01-01T00:00:00.000Z',
});

/** A little opt-out server: the list (newest first, paged, searchable), add, remove and settings. */
function server(initial: OptOutEntry[]) {
  let list = [...initial];
  let settings: OptOutSettings = { ...DEFAULT_OPT_OUT_SETTINGS, keywords: [...DEFAULT_OPT_OUT_SETTINGS.keywords] };
  return fakeFetch((method, url, body) => {
    const path = url.pathname;
    if (path.endsWith('/settings')) {
      if (method === 'PUT') {
        const patch = body as Partial<OptOutSettings>;
        if (patch.keywords && patch.keywords.length === 0)
          return { status: 400, body: { success: false, error: OPT_OUT_MESSAGES.keywordsEmpty } };
        settings = { ...settings, ...patch };
      }
      return { body: { success: true, settings } };
    }
    if (method === 'DELETE') {
      const phone = decodeURIComponent(path.split('/').at(-1)!);
      list = list.filter((o) => o.phoneNumber !== phone);
      return { body: { success: true } };
    }
    if (method === 'POST') {
      const phones = (body as { phoneNumbers: string[] }).phoneNumbers;
      const bad = phones.filter((p) => !/^\d{8}$/.test(p));
      if (bad.length > 0)
        return { status: 400, body: { success: false, error: OPT_OUT_MESSAGES.invalidPhoneNumbers(bad) } };
      const fresh = phones.filter((p) => !list.some((o) => o.phoneNumber === p));
      list = [...fresh.map((p) => entry(p)), ...list];
      return { body: { success: true, added: fresh.length, alreadyListed: phones.length - fresh.length } };
    }
    const q = url.searchParams.get('q') ?? '';
    const limit = Number(url.searchParams.get('limit'));
    const start = Number(url.searchParams.get('cursor') ?? 0);
    const matching = list.filter((o) => o.phoneNumber.includes(q));
    const next = start + limit < matching.length ? String(start + limit) : null;
    return {
      body: { success: true, optOuts: matching.slice(start, start + limit), nextCursor: next, total: list.length },
    };
  });
}

// Typing and paging through a real store is slow on a busy machine.
vi.setConfig({ testTimeout: 30_000 });

describe('Opt-outs card', () => {
  it('shows the count and the list, pages with Next / Previous, and searches', async () => {
    const phones = Array.from({ length: OPT_OUTS_PAGE + 5 }, (_, i) => String(91_000_000 + i));
    const api = server(phones.map((p, i) => entry(p, i === 0 ? 'keyword' : 'manual')));
    vi.stubGlobal('fetch', api.fn);
    const user = userEvent.setup();
    renderWithProviders(<OptOutsCard />);

    expect(await screen.findByText(`${OPT_OUTS_PAGE + 5} numbers`)).toBeTruthy();
    const list = screen.getByRole('list', { name: 'Opted-out numbers' });
    expect(within(list).getAllByRole('listitem')).toHaveLength(OPT_OUTS_PAGE);
    expect(within(list).getByText('Replied with a keyword')).toBeTruthy();
    expect(screen.getByRole('button', { name: 'Previous' })).toHaveProperty('disabled', true);

    await user.click(screen.getByRole('button', { name: 'Next' }));
    await waitFor(() =>
      expect(within(screen.getByRole('list', { name: 'Opted-out numbers' })).getAllByRole('listitem')).toHaveLength(5),
    );
    expect(screen.getByRole('button', { name: 'Next' })).toHaveProperty('disabled', true);
    await user.click(screen.getByRole('button', { name: 'Previous' }));
    await waitFor(() =>
      expect(within(screen.getByRole('list', { name: 'Opted-out numbers' })).getAllByRole('listitem')).toHaveLength(
        OPT_OUTS_PAGE,
      ),
    );

    await user.type(screen.getByPlaceholderText('Search numbers'), '9100 0024');
    await waitFor(() =>
      expect(within(screen.getByRole('list', { name: 'Opted-out numbers' })).getAllByRole('listitem')).toHaveLength(1),
    );
    expect(screen.getByText('91000024')).toBeTruthy();
    expect(api.calls.some((c) => c.url.searchParams.get('q') === '91000024')).toBe(true);
    expect(api.calls.some((c) => c.method === 'GET' && c.url.pathname === '/api/opt-outs/user_test_1')).toBe(true);
  });

  it('adds pasted numbers, shows the server’s refusal of malformed ones, and removes a number', async () => {
    const api = server([entry('91234567')]);
    vi.stubGlobal('fetch', api.fn);
    const user = userEvent.setup();
    renderWithProviders(<OptOutsCard />);
    await screen.findByText('1 number');

    const box = screen.getByLabelText(/Add numbers/);
    await user.type(box, '61234567, 123');
    await user.click(screen.getByRole('button', { name: 'Add to opt-outs' }));
    expect(await screen.findByText(OPT_OUT_MESSAGES.invalidPhoneNumbers(['123']))).toBeTruthy();

    await user.clear(box);
    await user.type(box, '61234567{enter}51234567');
    await user.click(screen.getByRole('button', { name: 'Add to opt-outs' }));
    expect(await screen.findByText('3 numbers')).toBeTruthy();
    const add = api.calls.filter((c) => c.method === 'POST').at(-1)!;
    expect(add.body).toEqual({ phoneNumbers: ['61234567', '51234567'] });

    await user.click(screen.getByRole('button', { name: 'Remove 91234567' }));
    expect(await screen.findByText('2 numbers')).toBeTruthy();
    expect(
      api.calls.some((c) => c.method === 'DELETE' && c.url.pathname === '/api/opt-outs/user_test_1/91234567'),
    ).toBe(true);
  });

  it('edits the keywords (an empty list is refused with the clear message) and the confirmation toggle', async () => {
    const api = server([]);
    vi.stubGlobal('fetch', api.fn);
    const user = userEvent.setup();
    renderWithProviders(<OptOutsCard />);
    expect(await screen.findByText('Nobody has opted out.')).toBeTruthy();
    const keywords = await screen.findByRole('list', { name: 'Opt-out keywords' });
    expect(
      within(keywords)
        .getAllByRole('listitem')
        .map((li) => li.textContent?.replace('×', '')),
    ).toEqual([...DEFAULT_OPT_OUT_SETTINGS.keywords]);

    await user.type(screen.getByLabelText('New keyword'), 'END');
    await user.click(screen.getByRole('button', { name: 'Add keyword' }));
    await waitFor(() =>
      expect(within(screen.getByRole('list', { name: 'Opt-out keywords' })).getByText('END')).toBeTruthy(),
    );

    for (const k of [...DEFAULT_OPT_OUT_SETTINGS.keywords, 'END'].slice(0, -1)) {
      await user.click(screen.getByRole('button', { name: `Remove keyword ${k}` }));
      await waitFor(() => expect(screen.queryByRole('button', { name: `Remove keyword ${k}` })).toBeNull());
    }
    // The last keyword cannot go: the same rule as the server's, with its words.
    await user.click(screen.getByRole('button', { name: 'Remove keyword END' }));
    expect(await screen.findByText(OPT_OUT_MESSAGES.keywordsEmpty)).toBeTruthy();
    expect(screen.getByRole('button', { name: 'Remove keyword END' })).toBeTruthy();

    const toggle = screen.getByRole('switch', { name: 'Confirmation reply' });
    expect(toggle.getAttribute('aria-checked')).toBe('false');
    await user.click(toggle);
    await waitFor(() =>
      expect(screen.getByRole('switch', { name: 'Confirmation reply' }).getAttribute('aria-checked')).toBe('true'),
    );
    const put = api.calls.filter((c) => c.method === 'PUT').at(-1)!;
    expect(put.body).toEqual({ confirmationEnabled: true });
  });

  it('the review note says how many recipients have opted out and will be skipped', async () => {
    const api = fakeFetch(() => ({ body: { success: true, optedOut: ['91234567', '61234567'], notOnWhatsApp: [] } }));
    vi.stubGlobal('fetch', api.fn);
    renderWithProviders(<OptOutsReviewNote numbers={['91234567', '61234567', '51234567']} />);
    expect(await screen.findByText('2 recipients have opted out and will be skipped')).toBeTruthy();
    expect(api.calls[0]!.body).toEqual({ phoneNumbers: ['91234567', '61234567', '51234567'] });
  });

  it('splits pasted numbers on lines, commas and semicolons', () => {
    expect(splitNumbers(' 91234567,61234567\n\n51234567 ; 852 9123 4567 ')).toEqual([
      '91234567',
      '61234567',
      '51234567',
      '852 9123 4567',
    ]);
  });
});
