import { act, screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';
import { LIMITS, MESSAGES } from '@bns/contracts';
import { connectedState, renderWithProviders } from '../../../test/renderWithProviders.js';
import { SendTab } from '../SendTab.js';

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
    await user.paste('61234567\tAnn\n12\n91234567\n+852 5123 4567\n55550001\n55550002\n55550003\n55550004\n55550005\n55550006\n');
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
    await user.keyboard('{Escape}');
    expect(screen.queryByRole('dialog')).toBeNull();
  });

  it('enables Start Sending only with a message and numbers, and confirms with up to 10 recipients', async () => {
    const user = userEvent.setup();
    const numbers = Array.from({ length: 12 }, (_, i) => String(91234500 + i));
    const { store } = renderWithProviders(<SendTab />, { preloadedState: connectedState() });
    const start = screen.getByRole('button', { name: 'Start Sending' }) as HTMLButtonElement;
    expect(start.disabled).toBe(true);
    expect(screen.getByText(MESSAGES.enterMessageFirst)).toBeTruthy();

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
    expect(within(within(dialog).getByRole('list', { name: 'Recipients' })).getAllByRole('listitem')).toHaveLength(LIMITS.confirmRecipientsShown);
    expect(within(dialog).getByText('and 2 more')).toBeTruthy();
    // ceil(4 × 11 / 60) = 1 minute.
    expect(within(dialog).getByText('1 minute')).toBeTruthy();
    await user.keyboard('{Escape}');
    expect(screen.queryByRole('dialog')).toBeNull();
    expect(document.activeElement).toBe(start);
  });

  it('shows the QR card with its steps and attempt, then the blurred QR and refresh message after max attempts', () => {
    const qr = { status: 'qr' as const, qr: '2@abc,def,ghi', attempts: 2, maxAttemptsMessage: null, creatingMessage: null, sessionId: null, phoneNumber: null, socket: 'connected' as const };
    const { store } = renderWithProviders(<SendTab />, { preloadedState: { connection: qr } });
    expect(screen.getByText('Attempt 2 of 5')).toBeTruthy();
    expect(screen.getByText('Tap Linked Devices')).toBeTruthy();
    expect(screen.queryByRole('button', { name: 'Start Sending' })).toBeNull();
    act(() => {
      store.dispatch({ type: 'connection/qrMaxAttempts', payload: { message: 'Maximum QR code attempts reached', attempts: 5 } });
    });
    expect(screen.getByRole('alert').textContent).toContain(MESSAGES.qrMaxAttemptsRefresh);
    expect(document.querySelector('.qr-frame.blurred')).not.toBeNull();
  });

  it('shows the connected number as digits 3 to 11', () => {
    renderWithProviders(<SendTab />, { preloadedState: connectedState() });
    expect(screen.getByRole('status').textContent).toContain('91234567');
  });
});
