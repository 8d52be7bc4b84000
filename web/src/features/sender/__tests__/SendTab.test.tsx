import { act, fireEvent, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { LIMITS, MESSAGES, OPT_OUT_MESSAGES, standardPolicy, WEB_MESSAGES } from '@bns/contracts';
import { resetWebConfig } from '../../config/publicConfig.js';
import { resetSimulatorProbe } from '../../connection/SimulatorControls.js';
import { OPT_OUT_RECHECK_MS } from '../../../app/listeners.js';
import { inboundMessageReceived } from '../../connection/socketMiddleware.js';
import { inputValueOf } from '../../pacing/schedule.js';
import { numbersAdded, recipientsImported } from '../slice.js';
import { startSending } from '../../job/thunks.js';
import { connectedState, fakeFetch, renderWithProviders } from '../../../test/renderWithProviders.js';
import { SendTab } from '../SendTab.js';

afterEach(() => {
  vi.unstubAllGlobals();
});

describe('Send Messages tab', () => {
  it('adds numbers by typing and by pasting a column into the 10-row spreadsheet, dropping bad rows and merging duplicates', async () => {
    const user = userEvent.setup();
    const { store } = renderWithProviders(<SendTab />, { preloadedState: connectedState() });

    await user.click(screen.getByRole('button', { name: 'Add Phone Numbers' }));
    const dialog = screen.getByRole('dialog', { name: 'Add Phone Numbers' });
    const cells = within(dialog).getAllByRole('textbox');
    expect(cells).toHaveLength(LIMITS.spreadsheetInitialRows);
    expect(document.activeElement).toBe(cells[0]);

    await user.type(cells[0]!, '9123 4567{Enter}');
    expect(document.activeElement).toBe(cells[1]);
    await user.paste(
      '61234567\tAnn\n12\n91234567\n+852 5123 4567\n55550001\n55550002\n55550003\n55550004\n55550005\n55550006\n',
    );
    // Ten pasted lines from row 2 need 11 rows.
    expect(within(dialog).getAllByRole('textbox')).toHaveLength(11);
    await user.click(within(dialog).getByRole('button', { name: 'Add Numbers' }));

    expect(screen.queryByRole('dialog')).toBeNull();
    expect(store.getState().sender.phoneNumbers).toEqual([
      '91234567',
      '61234567',
      '51234567',
      '55550001',
      '55550002',
      '55550003',
      '55550004',
      '55550005',
      '55550006',
    ]);
    expect(within(screen.getByRole('list', { name: 'Phone numbers' })).getAllByRole('listitem')).toHaveLength(9);
    expect(await screen.findByText(/1 invalid skipped, 1 duplicate merged/)).toBeTruthy();
  });

  it('says "No valid phone numbers found in spreadsheet" and keeps the dialog open', async () => {
    const user = userEvent.setup();
    renderWithProviders(<SendTab />, { preloadedState: connectedState() });
    await user.click(screen.getByRole('button', { name: 'Add Phone Numbers' }));
    await user.type(screen.getByRole('textbox', { name: 'Phone number row 1' }), '1234');
    await user.click(screen.getByRole('button', { name: 'Add Numbers' }));
    expect(screen.getByRole('alert').textContent).toBe(MESSAGES.noValidNumbersInSpreadsheet);
    expect(screen.getByRole('dialog', { name: 'Add Phone Numbers' })).toBeTruthy();
    // A valid column pasted in clears it (a paste of several rows is not a keystroke in one cell).
    await user.click(screen.getByRole('textbox', { name: 'Phone number row 2' }));
    await user.paste('91234567\n61234567\n');
    expect(screen.queryByRole('alert')).toBeNull();
    await user.keyboard('{Escape}');
    expect(screen.queryByRole('dialog')).toBeNull();
  });

  it('enables Start Sending only with a message and numbers, and confirms with up to 10 recipients', async () => {
    // The server sends every 10 s (SEND_DELAY_MS): the confirm's estimate uses that, not 4 s.
    const server = fakeFetch((_m, url) =>
      url.pathname === '/api/jobs/pacing'
        ? { body: { success: true, sendDelayMs: 10_000, sendJitterMs: 0 } }
        : { status: 404, body: {} },
    );
    vi.stubGlobal('fetch', server.fn);
    const user = userEvent.setup();
    const numbers = Array.from({ length: 12 }, (_, i) => String(91234500 + i));
    const { store } = renderWithProviders(<SendTab />, { preloadedState: connectedState() });
    const start = screen.getByRole('button', { name: 'Start Sending' }) as HTMLButtonElement;
    expect(start.disabled).toBe(true);
    expect(screen.getByText(MESSAGES.enterMessageFirst)).toBeTruthy();

    // Only invisible characters (zero-width spaces) are no message either: the server would refuse it.
    act(() => {
      store.dispatch({ type: 'sender/messageChanged', payload: '\u200b\u200b' });
      store.dispatch({ type: 'sender/numbersAdded', payload: numbers });
    });
    expect(start.disabled).toBe(true);
    expect(screen.getByText(MESSAGES.enterMessageFirst)).toBeTruthy();
    act(() => {
      store.dispatch({ type: 'sender/messageChanged', payload: '' });
      store.dispatch({ type: 'sender/numbersCleared' });
    });

    await user.type(screen.getByLabelText('Message'), 'Hello *VIP*');
    expect(start.disabled).toBe(true);
    expect(screen.getByText(MESSAGES.addPhoneNumbersFirst, { selector: '.review-side p' })).toBeTruthy();
    act(() => {
      store.dispatch({ type: 'sender/numbersAdded', payload: numbers });
    });
    expect(start.disabled).toBe(false);

    // The preview shows the formatting; the summary the first 5 numbers.
    expect(screen.getByLabelText('Message preview').querySelector('strong')?.textContent).toBe('VIP');
    expect(screen.getByText('and 7 more')).toBeTruthy();

    await user.click(start);
    const dialog = screen.getByRole('dialog', { name: 'Confirm Bulk Send' });
    expect(within(within(dialog).getByRole('list', { name: 'Recipients' })).getAllByRole('listitem')).toHaveLength(
      LIMITS.confirmRecipientsShown,
    );
    expect(within(dialog).getByText('and 2 more')).toBeTruthy();
    // ceil(10 s × 11 / 60) = 2 minutes.
    expect(await within(dialog).findByText('2 minutes')).toBeTruthy();
    await user.keyboard('{Escape}');
    expect(screen.queryByRole('dialog')).toBeNull();
    expect(document.activeElement).toBe(start);
  });

  it('shows the QR card with its steps and attempt, then the blurred QR and refresh message after max attempts', () => {
    const qr = {
      status: 'qr' as const,
      qr: '2@abc,def,ghi',
      attempts: 2,
      maxAttemptsMessage: null,
      creatingMessage: null,
      sessionId: null,
      phoneNumber: null,
      socket: 'connected' as const,
    };
    const { store } = renderWithProviders(<SendTab />, { preloadedState: { connection: qr } });
    expect(screen.getByText('Attempt 2 of 5')).toBeTruthy();
    expect(screen.getByText('Tap Linked Devices')).toBeTruthy();
    expect(screen.queryByRole('button', { name: 'Start Sending' })).toBeNull();
    act(() => {
      store.dispatch({
        type: 'connection/qrMaxAttempts',
        payload: { message: 'Maximum QR code attempts reached', attempts: 5 },
      });
    });
    expect(screen.getByRole('alert').textContent).toContain(MESSAGES.qrMaxAttemptsRefresh);
    expect(document.querySelector('.qr-frame.blurred')).not.toBeNull();
  });

  it('shows the connected number as digits 3 to 11', () => {
    renderWithProviders(<SendTab />, { preloadedState: connectedState() });
    expect(screen.getByRole('status').textContent).toContain('91234567');
  });

  it('lists the rows with blank cells by their spreadsheet row; fill a default or send to the others', async () => {
    const server = fakeFetch((_m, url) =>
      url.pathname === '/api/jobs/pacing'
        ? { body: { success: true, sendDelayMs: 4000, sendJitterMs: 0 } }
        : { status: 404, body: {} },
    );
    vi.stubGlobal('fetch', server.fn);
    const user = userEvent.setup();
    const { store } = renderWithProviders(<SendTab />, { preloadedState: connectedState() });
    await user.type(screen.getByLabelText('Message'), 'Hi {{{{name}}, see you at {{{{shop}}');
    act(() => {
      store.dispatch(
        recipientsImported([
          { phone: '91230001', variables: { name: 'Bob', shop: 'TST' }, row: 2 },
          { phone: '91230002', variables: { shop: 'TST' }, row: 4 },
          { phone: '91230003', variables: { name: 'Cat', shop: 'MK' }, row: 5 },
        ]),
      );
    });
    const panel = screen.getByRole('group', { name: WEB_MESSAGES.rowsMissingValuesTitle });
    expect(
      within(panel)
        .getAllByRole('listitem')
        .map((li) => li.textContent),
    ).toEqual([`Row 4 · 91230002 · ${WEB_MESSAGES.placeholderMissing} {{name}}`]);

    await user.type(within(panel).getByLabelText(WEB_MESSAGES.fillDefaultLabel), 'friend');
    await user.click(within(panel).getByRole('button', { name: WEB_MESSAGES.fillDefault }));
    expect(screen.queryByRole('group', { name: WEB_MESSAGES.rowsMissingValuesTitle })).toBeNull();
    expect(store.getState().sender.variables['91230002']).toEqual({ name: 'friend', shop: 'TST' });

    act(() => {
      store.dispatch(recipientsImported([{ phone: '91230004', variables: { name: ' ' }, row: 9 }]));
    });
    const again = screen.getByRole('group', { name: WEB_MESSAGES.rowsMissingValuesTitle });
    expect(within(again).getByRole('listitem').textContent).toBe(
      `Row 9 · 91230004 · ${WEB_MESSAGES.placeholderMissing} {{name}}, {{shop}}`,
    );
    await user.click(within(again).getByRole('button', { name: WEB_MESSAGES.sendToOthers(3) }));
    // Straight to the confirm, with the three that have values; the list itself is untouched until Send.
    const dialog = screen.getByRole('dialog', { name: 'Confirm Bulk Send' });
    expect(within(within(dialog).getByRole('list', { name: 'Recipients' })).getAllByRole('listitem')).toHaveLength(3);
    const before = store.getState().sender;
    await user.click(within(dialog).getByRole('button', { name: 'Cancel' }));
    expect(store.getState().sender).toBe(before);
    expect(store.getState().sender.phoneNumbers).toHaveLength(4);
  });

  it('{{name|friend}}: no missing value; Review says who gets the fallback and previews it', async () => {
    const server = fakeFetch((_m, url) =>
      url.pathname === '/api/jobs/pacing'
        ? { body: { success: true, sendDelayMs: 4000, sendJitterMs: 0 } }
        : { status: 404, body: {} },
    );
    vi.stubGlobal('fetch', server.fn);
    const user = userEvent.setup();
    const { store } = renderWithProviders(<SendTab />, { preloadedState: connectedState() });
    await user.type(screen.getByLabelText('Message'), 'Hi {{{{name|friend}}, see you');
    act(() => {
      store.dispatch(
        recipientsImported([
          { phone: '91230001', variables: {}, row: 2 },
          { phone: '91230002', variables: { name: 'Ann' }, row: 3 },
          { phone: '91230003', variables: { name: '' }, row: 4 },
        ]),
      );
    });
    expect(screen.queryByTestId('check-variables')).toBeNull();
    expect(screen.getByTestId('fallback-note').textContent).toBe(
      '{{name}} is empty for 2 recipients: they get “friend”',
    );
    expect(screen.getByLabelText('Message preview').textContent).toContain('Hi friend, see you');
    expect((screen.getByRole('button', { name: 'Start Sending' }) as HTMLButtonElement).disabled).toBe(false);
  });

  it('the checklist says which {{variable}} has no value in how many rows, and Start Sending waits for it', async () => {
    const server = fakeFetch((_m, url) =>
      url.pathname === '/api/jobs/pacing'
        ? { body: { success: true, sendDelayMs: 4000, sendJitterMs: 0 } }
        : { status: 404, body: {} },
    );
    vi.stubGlobal('fetch', server.fn);
    const user = userEvent.setup();
    const { store } = renderWithProviders(<SendTab />, { preloadedState: connectedState() });
    await user.type(screen.getByLabelText('Message'), 'Hi {{{{name}}');
    act(() => {
      store.dispatch(numbersAdded(['91230001', '91230002', '91230003', '91230004']));
    });
    const check = screen.getByTestId('check-variables');
    expect(check.textContent).toContain(WEB_MESSAGES.checkVariables);
    expect(check.textContent).toContain('{{name}} missing in 4 rows');
    expect(check.className).toBe('missing');
    expect((screen.getByRole('button', { name: 'Start Sending' }) as HTMLButtonElement).disabled).toBe(true);
    // The rule holds in the start itself too.
    expect(await store.dispatch(startSending())).toBe(false);
    expect(server.calls.some((c) => c.url.pathname === '/start-bulk-messages')).toBe(false);

    act(() => {
      store.dispatch(
        recipientsImported(
          ['91230001', '91230002', '91230003', '91230004'].map((phone, i) => ({
            phone,
            variables: { name: `N${i}` },
            row: i + 2,
          })),
        ),
      );
    });
    expect(screen.getByTestId('check-variables').className).toBe('ok');
    expect((screen.getByRole('button', { name: 'Start Sending' }) as HTMLButtonElement).disabled).toBe(false);
    store.listener.clearListeners();
  });

  it('shows "Simulate scan" on the QR card only when the server says WhatsApp is simulated', async () => {
    const qr = {
      status: 'qr' as const,
      qr: '2@abc',
      attempts: 1,
      maxAttemptsMessage: null,
      creatingMessage: null,
      sessionId: null,
      phoneNumber: null,
      socket: 'connected' as const,
    };
    const server = fakeFetch((method, url) => {
      if (url.pathname === '/api/config')
        return { body: { donationUrl: null, supportEmail: 'a@b.hk', whatsappEngine: 'simulated' } };
      if (url.pathname === '/dev/simulator/scan' && method === 'POST') return { body: { success: true } };
      return { status: 404, body: {} };
    });
    vi.stubGlobal('fetch', server.fn);
    const user = userEvent.setup();
    const first = renderWithProviders(<SendTab />, { preloadedState: { connection: qr } });
    await user.click(await screen.findByRole('button', { name: WEB_MESSAGES.simulateScan }));
    expect(server.calls.some((c) => c.method === 'POST' && c.url.pathname === '/dev/simulator/scan')).toBe(true);
    first.unmount();

    resetWebConfig();
    const real = fakeFetch((_m, url) =>
      url.pathname === '/api/config'
        ? { body: { donationUrl: null, supportEmail: 'a@b.hk', whatsappEngine: 'webjs' } }
        : { status: 404, body: {} },
    );
    vi.stubGlobal('fetch', real.fn);
    renderWithProviders(<SendTab />, { preloadedState: { connection: qr } });
    await waitFor(() => expect(real.calls.some((c) => c.url.pathname === '/api/config')).toBe(true));
    await new Promise((r) => setTimeout(r, 50));
    expect(screen.queryByRole('button', { name: WEB_MESSAGES.simulateScan })).toBeNull();
  });

  it('once linked with the simulated engine: Simulate unlink, and Simulate a reply only where the gateway has the route (gone on a 404)', async () => {
    let inboundStatus = 200;
    const server = fakeFetch((method, url) => {
      if (url.pathname === '/api/config')
        return { body: { donationUrl: null, supportEmail: 'a@b.hk', whatsappEngine: 'simulated' } };
      if (url.pathname === '/api/docs-json') return { body: { paths: { '/dev/simulator/inbound': { post: {} } } } };
      if (url.pathname === '/dev/simulator/inbound' && method === 'POST')
        return {
          status: inboundStatus,
          body: inboundStatus === 200 ? { success: true } : { success: false, error: 'Not found' },
        };
      if (url.pathname === '/dev/simulator/disconnect' && method === 'POST')
        return { body: { success: true, disconnected: true } };
      return { status: 404, body: {} };
    });
    vi.stubGlobal('fetch', server.fn);
    resetSimulatorProbe();
    const user = userEvent.setup();
    renderWithProviders(<SendTab />, { preloadedState: connectedState() });
    await user.click(await screen.findByRole('button', { name: WEB_MESSAGES.simulateUnlink }));
    expect(server.calls.some((c) => c.method === 'POST' && c.url.pathname === '/dev/simulator/disconnect')).toBe(true);

    const reply = await screen.findByRole('form', { name: WEB_MESSAGES.simulateReply });
    await user.type(within(reply).getByLabelText(WEB_MESSAGES.simulateReplyFrom), '9123 4567');
    await user.type(within(reply).getByLabelText(WEB_MESSAGES.simulateReplyText), 'STOP');
    await user.click(within(reply).getByRole('button', { name: WEB_MESSAGES.simulateReply }));
    expect(await screen.findByText(WEB_MESSAGES.simulateReplySent)).toBeTruthy();
    expect(server.calls.find((c) => c.url.pathname === '/dev/simulator/inbound')!.body).toEqual({
      from: '91234567',
      text: 'STOP',
    });

    // A gateway without the route answers 404: the control goes away.
    inboundStatus = 404;
    await user.type(within(reply).getByLabelText(WEB_MESSAGES.simulateReplyText), 'hello');
    await user.click(within(reply).getByRole('button', { name: WEB_MESSAGES.simulateReply }));
    await waitFor(() => expect(screen.queryByRole('form', { name: WEB_MESSAGES.simulateReply })).toBeNull());
    expect(screen.getByRole('button', { name: WEB_MESSAGES.simulateUnlink })).toBeTruthy();
  });

  it('Send later: Start waits for a valid time, the confirm says the send is scheduled and for when', async () => {
    const server = fakeFetch((_m, url) => {
      if (url.pathname === '/api/jobs/pacing') return { body: { success: true, sendDelayMs: 4000, sendJitterMs: 0 } };
      if (url.pathname === '/api/sending-policy/user_test_1')
        return { body: { success: true, policy: standardPolicy() } };
      if (url.pathname === '/start-bulk-messages')
        return { body: { success: true, jobId: 'job-later', estimatedTime: 1 } };
      return { status: 404, body: { success: false, error: 'Not found' } };
    });
    vi.stubGlobal('fetch', server.fn);
    const user = userEvent.setup();
    const { store } = renderWithProviders(<SendTab />, { preloadedState: connectedState() });
    await user.type(screen.getByLabelText('Message'), 'Sale tomorrow');
    act(() => {
      store.dispatch({ type: 'sender/numbersAdded', payload: ['91234567'] });
    });
    const start = screen.getByRole('button', { name: 'Start Sending' }) as HTMLButtonElement;
    expect(start.disabled).toBe(false);
    await user.click(await screen.findByRole('checkbox', { name: 'Send later' }));
    expect(start.disabled).toBe(true);
    const input = screen.getByLabelText('Start sending at');
    fireEvent.change(input, { target: { value: inputValueOf(new Date(Date.now() - 60_000)) } });
    expect(start.disabled).toBe(true);
    const when = new Date(Date.now() + 2 * 86_400_000);
    fireEvent.change(input, { target: { value: inputValueOf(when) } });
    expect(start.disabled).toBe(false);

    await user.click(start);
    const dialog = screen.getByRole('dialog', { name: 'Confirm Bulk Send' });
    expect(within(dialog).getByTestId('confirm-schedule').textContent).toMatch(/^Scheduled: sending starts .+\./);
    await user.click(within(dialog).getByRole('button', { name: 'Send Messages' }));
    await waitFor(() => expect(store.getState().job.jobId).toBe('job-later'));
    const body = server.calls.find((c) => c.url.pathname === '/start-bulk-messages')!.body as { startAt?: string };
    expect(Math.abs(Date.parse(body.startAt!) - when.getTime())).toBeLessThan(60_000);
    // Used once: the next send starts at once unless chosen again.
    expect(store.getState().pacing).toMatchObject({ later: false, startAt: null });
    store.listener.clearListeners();
  });

  it('the confirm counts only the numbers that will be sent to and says how many are skipped', async () => {
    const server = fakeFetch((_m, url) => {
      if (url.pathname === '/api/jobs/pacing') return { body: { success: true, sendDelayMs: 4000, sendJitterMs: 0 } };
      if (url.pathname === '/api/opt-outs/user_test_1/check')
        return { body: { success: true, optedOut: ['91230002'], notOnWhatsApp: [] } };
      return { status: 404, body: { success: false, error: 'Not found' } };
    });
    vi.stubGlobal('fetch', server.fn);
    const user = userEvent.setup();
    const { store } = renderWithProviders(<SendTab />, { preloadedState: connectedState() });
    await user.type(screen.getByLabelText('Message'), 'Hello');
    act(() => {
      store.dispatch({ type: 'sender/numbersAdded', payload: ['91230001', '91230002'] });
    });
    expect(await screen.findByText(OPT_OUT_MESSAGES.willBeSkipped(1))).toBeTruthy();
    await user.click(screen.getByRole('button', { name: 'Start Sending' }));
    const dialog = screen.getByRole('dialog', { name: 'Confirm Bulk Send' });
    await waitFor(() =>
      expect(within(dialog).getByText(/^Send this message to/).textContent).toMatch(
        /^Send this message to 1 recipient\? Estimated time: 0 minutes\.$/,
      ),
    );
    expect(within(dialog).getByTestId('confirm-skipped').textContent).toBe(`${OPT_OUT_MESSAGES.willBeSkipped(1)}.`);
    expect(
      within(within(dialog).getByRole('list', { name: 'Recipients' }))
        .getAllByRole('listitem')
        .map((li) => li.textContent),
    ).toEqual(['91230001']);
  });

  it('Step 2 asks about opt-outs again when it opens and after a reply comes in (a STOP), not only after switching tabs', async () => {
    let optedOut: string[] = [];
    const server = fakeFetch((_m, url) => {
      if (url.pathname === '/api/opt-outs/user_test_1/check')
        return { body: { success: true, optedOut, notOnWhatsApp: [] } };
      return { status: 404, body: { success: false, error: 'Not found' } };
    });
    vi.stubGlobal('fetch', server.fn);
    const checks = () => server.calls.filter((c) => c.url.pathname.endsWith('/check')).length;
    const { store, unmount } = renderWithProviders(<SendTab />, { preloadedState: connectedState() });
    act(() => {
      store.dispatch({ type: 'sender/numbersAdded', payload: ['91230001', '91230002'] });
    });
    await waitFor(() => expect(checks()).toBe(1));

    // The contact replies STOP: the jobs service records it, the note follows without a tab switch.
    optedOut = ['91230002'];
    act(() => {
      store.dispatch(inboundMessageReceived({ from: '85291230002', at: new Date().toISOString() }));
    });
    expect(
      await screen.findByText(OPT_OUT_MESSAGES.willBeSkipped(1), undefined, { timeout: OPT_OUT_RECHECK_MS + 3000 }),
    ).toBeTruthy();
    expect(checks()).toBe(2);

    // Opening Step 2 again (e.g. back from another tab) asks again rather than showing a cached answer.
    unmount();
    renderWithProviders(<SendTab />, { store });
    await waitFor(() => expect(checks()).toBe(3));
    store.listener.clearListeners();
  });

  it('Step 2 previews the first option of each {A|B}, in the review and in the confirm', async () => {
    vi.stubGlobal('fetch', fakeFetch(() => ({ status: 404, body: { success: false, error: 'Not found' } })).fn);
    const user = userEvent.setup();
    const { store } = renderWithProviders(<SendTab />, { preloadedState: connectedState() });
    act(() => {
      store.dispatch({ type: 'sender/messageChanged', payload: '{Hi|Hey} there, {sale|deal} today' });
      store.dispatch({ type: 'sender/numbersAdded', payload: ['91230001'] });
    });
    expect(screen.getByLabelText('Message preview').textContent).toBe('Hi there, sale today');
    await user.click(screen.getByRole('button', { name: 'Start Sending' }));
    expect(
      within(screen.getByRole('dialog', { name: 'Confirm Bulk Send' })).getByLabelText('Message preview').textContent,
    ).toBe('Hi there, sale today');
  });
});
