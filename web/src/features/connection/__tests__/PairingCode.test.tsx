import { act, screen, waitFor } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { Socket } from 'socket.io-client';
import { SESSION_MESSAGES, WEB_MESSAGES } from '@bns/contracts';
import { makeStore } from '../../../app/store.js';
import { fakeFetch, renderWithProviders, TEST_USER } from '../../../test/renderWithProviders.js';
import { ConnectionPanel } from '../ConnectionPanel.js';
import { socketConnect } from '../socketMiddleware.js';

afterEach(() => {
  vi.unstubAllGlobals();
});

/** A socket stand-in: records what the page emits and lets the test play the server's events and acks. */
function fakeSocket(answer: (name: string, payload: unknown) => unknown) {
  const handlers = new Map<string, (payload: unknown) => void>();
  const emitted: { name: string; payload: unknown }[] = [];
  const socket = {
    on: (name: string, fn: (payload: unknown) => void) => {
      handlers.set(name, fn);
      return socket;
    },
    io: { on: () => undefined, removeAllListeners: () => undefined },
    removeAllListeners: () => undefined,
    disconnect: () => undefined,
    emit: (name: string, ...args: unknown[]) => {
      const ack = args.find((a) => typeof a === 'function') as ((r: unknown) => void) | undefined;
      const payload = typeof args[0] === 'function' ? undefined : args[0];
      emitted.push({ name, payload });
      const reply = answer(name, payload);
      if (ack && reply !== undefined) ack(reply);
    },
  };
  return {
    socket: socket as unknown as Socket,
    emitted,
    serverSays: (name: string, p?: unknown) => handlers.get(name)?.(p),
  };
}

const simulatedConfig = () =>
  fakeFetch((method, url) => {
    if (url.pathname === '/api/config')
      return { body: { donationUrl: null, supportEmail: 'a@b.hk', whatsappEngine: 'simulated' } };
    if (url.pathname === '/dev/simulator/pair' && method === 'POST')
      return { body: { success: true, sessionId: 's', phoneNumber: '85291234567' } };
    return { status: 404, body: {} };
  });

describe('linking by phone number on the QR card', () => {
  it('asks for a code beside the QR, shows it as ABCD-EFGH with the steps and expiry, enters it (dev) and cancels back to the QR', async () => {
    const server = simulatedConfig();
    vi.stubGlobal('fetch', server.fn);
    const io = fakeSocket((name) =>
      name === 'requestPairingCode'
        ? { sessionId: 's' }
        : name === 'cancelPairingCode'
          ? { cancelled: true }
          : undefined,
    );
    const store = makeStore({ session: TEST_USER, socketFactory: () => io.socket });
    store.dispatch(socketConnect());
    const user = userEvent.setup();
    renderWithProviders(<ConnectionPanel />, { store });
    act(() => io.serverSays('qr', { qr: '2@abc', attempts: 1 }));

    await user.click(await screen.findByRole('button', { name: WEB_MESSAGES.linkWithPhone }));
    const number = screen.getByLabelText(WEB_MESSAGES.pairingPhoneLabel);
    // A number WhatsApp would not take is refused here, in the server's words, and never sent.
    await user.type(number, '12ab');
    await user.click(screen.getByRole('button', { name: WEB_MESSAGES.pairingGetCode }));
    expect(screen.getByRole('alert').textContent).toBe(SESSION_MESSAGES.pairingPhoneInvalid);
    expect(io.emitted.some((e) => e.name === 'requestPairingCode')).toBe(false);

    await user.clear(number);
    await user.type(number, '+852 9123 4567');
    await user.click(screen.getByRole('button', { name: WEB_MESSAGES.pairingGetCode }));
    expect(io.emitted.find((e) => e.name === 'requestPairingCode')?.payload).toEqual({ phoneNumber: '+852 9123 4567' });
    expect(screen.getByText(WEB_MESSAGES.pairingRequesting)).toBeTruthy();

    const expiresAt = new Date(Date.now() + 180_000).toISOString();
    act(() => io.serverSays('pairing_code', { code: 'ABCDEFGH', expiresAt }));
    expect(screen.getByLabelText(WEB_MESSAGES.pairingCodeLabel).textContent).toBe('ABCD-EFGH');
    for (const step of WEB_MESSAGES.pairingSteps) expect(screen.getByText(step)).toBeTruthy();
    expect(screen.getByText(/A new code replaces this one at .* \(in (3:00|2:59)\)/)).toBeTruthy();
    await user.click(await screen.findByRole('button', { name: WEB_MESSAGES.simulatePair }));
    await waitFor(() =>
      expect(server.calls.find((c) => c.url.pathname === '/dev/simulator/pair')?.body).toEqual({ code: 'ABCDEFGH' }),
    );

    await user.click(screen.getByRole('button', { name: WEB_MESSAGES.pairingCancel }));
    expect(io.emitted.some((e) => e.name === 'cancelPairingCode')).toBe(true);
    expect(await screen.findByAltText('WhatsApp QR code to scan with your phone')).toBeTruthy();
    store.listener.clearListeners();
  });

  it("shows the server's refusal under the number and keeps the QR", async () => {
    vi.stubGlobal('fetch', simulatedConfig().fn);
    const io = fakeSocket((name) =>
      name === 'requestPairingCode'
        ? { code: 'PAIRING_ALREADY_LINKED', message: SESSION_MESSAGES.pairingAlreadyLinked }
        : undefined,
    );
    const store = makeStore({ session: TEST_USER, socketFactory: () => io.socket });
    store.dispatch(socketConnect());
    const user = userEvent.setup();
    renderWithProviders(<ConnectionPanel />, { store });
    act(() => io.serverSays('qr', { qr: '2@abc', attempts: 1 }));
    await user.click(await screen.findByRole('button', { name: WEB_MESSAGES.linkWithPhone }));
    await user.type(screen.getByLabelText(WEB_MESSAGES.pairingPhoneLabel), '85291234567');
    await user.click(screen.getByRole('button', { name: WEB_MESSAGES.pairingGetCode }));
    expect((await screen.findByRole('alert')).textContent).toBe(SESSION_MESSAGES.pairingAlreadyLinked);
    expect(screen.getByAltText('WhatsApp QR code to scan with your phone')).toBeTruthy();
    store.listener.clearListeners();
  });
});
