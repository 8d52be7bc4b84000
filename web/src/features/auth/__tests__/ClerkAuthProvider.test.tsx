import { act, render, screen, waitFor } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import type { ReactNode } from 'react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { SESSION_MESSAGES, WEB_MESSAGES } from '@bns/contracts';
import { Root } from '../../../app/Root.js';
import { ClerkAuthProvider } from '../ClerkAuthProvider.js';

/**
 * The production sign-in path (VITE_CLERK_PUBLISHABLE_KEY set) with `@clerk/react` mocked: Clerk's
 * script cannot load offline, so its hooks are played by the test, and everything behind them (the
 * Root, the signed-in tool, RTK Query, the socket middleware) is the real app.
 */
const clerk = vi.hoisted(() => {
  const state = {
    isLoaded: false,
    isSignedIn: false,
    user: null as null | { id: string; firstName: string | null; primaryEmailAddress: { emailAddress: string } | null },
    token: 'tok-1',
    calls: [] as string[],
  };
  const getToken = async () => {
    state.calls.push(`getToken:${state.token}`);
    return state.token;
  };
  const signOut = async () => {
    state.calls.push('clerk.signOut');
  };
  const openSignIn = () => {
    state.calls.push('clerk.openSignIn');
  };
  return { state, getToken, signOut, openSignIn };
});

vi.mock('@clerk/react', () => ({
  ClerkProvider: ({ children, publishableKey }: { children: ReactNode; publishableKey: string }) => {
    clerk.state.calls.push(`ClerkProvider:${publishableKey}`);
    return children;
  },
  useAuth: () => ({
    isLoaded: clerk.state.isLoaded,
    isSignedIn: clerk.state.isSignedIn,
    getToken: clerk.getToken,
    signOut: clerk.signOut,
  }),
  useUser: () => ({ user: clerk.state.isSignedIn ? clerk.state.user : null }),
  useClerk: () => ({ openSignIn: clerk.openSignIn }),
}));

/** A socket.io client stand-in: records the handshake options, lets the test play the server. */
const sockets = vi.hoisted(() => ({
  opened: [] as {
    opts: Record<string, unknown>;
    handlers: Map<string, (...a: unknown[]) => void>;
    emitted: unknown[][];
  }[],
}));
vi.mock('socket.io-client', () => ({
  io: (opts: Record<string, unknown>) => {
    const handlers = new Map<string, (...a: unknown[]) => void>();
    const record = { opts, handlers, emitted: [] as unknown[][] };
    sockets.opened.push(record);
    const socket = {
      active: true,
      on: (event: string, fn: (...a: unknown[]) => void) => {
        handlers.set(event, fn);
        return socket;
      },
      emit: (...args: unknown[]) => {
        record.emitted.push(args);
        return socket;
      },
      io: { on: () => undefined, removeAllListeners: () => undefined },
      removeAllListeners: () => undefined,
      disconnect: () => undefined,
      connect: () => undefined,
    };
    return socket;
  },
}));

interface Call {
  method: string;
  path: string;
  authorization: string | null;
  body: unknown;
}

function server(answer: (method: string, path: string) => { status?: number; body: unknown }) {
  const calls: Call[] = [];
  const fn = async (input: RequestInfo | URL, init?: RequestInit) => {
    const req = input instanceof Request ? input : new Request(input, init);
    const path = new URL(req.url).pathname;
    const text = await req.text();
    calls.push({
      method: req.method,
      path,
      authorization: req.headers.get('authorization'),
      body: text ? JSON.parse(text) : undefined,
    });
    clerk.state.calls.push(`${req.method} ${path}`);
    const a = answer(req.method, path);
    return new Response(JSON.stringify(a.body), {
      status: a.status ?? 200,
      headers: { 'Content-Type': 'application/json' },
    });
  };
  return { fn, calls };
}

const defaultAnswers = (method: string, path: string): { status?: number; body: unknown } => {
  if (path === '/api/config')
    return { body: { donationUrl: null, supportEmail: 'help@shop.hk', whatsappEngine: 'simulated' } };
  if (path === '/api/session/cleanup')
    return { body: { success: true, sessionsCleanedUp: 1, message: SESSION_MESSAGES.cleanupDone } };
  if (path === '/dev/simulator/scan' && method === 'POST')
    return { body: { success: true, phoneNumber: '85291234567' } };
  if (path === '/dev/simulator/outbox') return { body: { success: true, messages: [] } };
  if (path === '/api/docs-json') return { body: { paths: {} } };
  return { status: 404, body: { success: false, error: 'Not found' } };
};

function renderApp() {
  return render(
    <ClerkAuthProvider publishableKey="pk_test_abc">
      <Root />
    </ClerkAuthProvider>,
  );
}

function signedIn(user: Partial<NonNullable<typeof clerk.state.user>> = {}) {
  clerk.state.isLoaded = true;
  clerk.state.isSignedIn = true;
  clerk.state.user = {
    id: 'user_clerk_1',
    firstName: 'Ann',
    primaryEmailAddress: { emailAddress: 'ann@shop.hk' },
    ...user,
  };
}

beforeEach(() => {
  clerk.state.isLoaded = false;
  clerk.state.isSignedIn = false;
  clerk.state.user = null;
  clerk.state.token = 'tok-1';
  clerk.state.calls = [];
  sockets.opened = [];
});

afterEach(() => {
  vi.unstubAllGlobals();
});

describe('Clerk sign-in (production path, @clerk/react mocked)', () => {
  it('shows the checking state while Clerk loads', () => {
    vi.stubGlobal('fetch', server(defaultAnswers).fn);
    renderApp();
    expect(screen.getByRole('status').textContent).toContain('Loading…');
    expect(screen.queryByRole('link', { name: 'Start Messaging' })).toBeNull();
    expect(clerk.state.calls).toContain('ClerkProvider:pk_test_abc');
  });

  it('signed out: the landing page, and Sign In opens Clerk’s sign-in', async () => {
    vi.stubGlobal('fetch', server(defaultAnswers).fn);
    clerk.state.isLoaded = true;
    const user = userEvent.setup();
    renderApp();
    await user.click(screen.getByRole('button', { name: 'Sign In' }));
    await user.click(screen.getByRole('link', { name: 'Start Messaging' }));
    expect(clerk.state.calls.filter((c) => c === 'clerk.openSignIn')).toHaveLength(2);
    // The deployment's support address, from GET /api/config.
    expect(await screen.findByRole('link', { name: 'help@shop.hk' })).toBeTruthy();
  });

  it('signed in: welcomes by first name, or by e-mail without one', async () => {
    vi.stubGlobal('fetch', server(defaultAnswers).fn);
    signedIn();
    const first = renderApp();
    expect((await screen.findByText('Welcome,')).closest('.welcome')?.textContent).toBe('Welcome, Ann');
    first.unmount();
    signedIn({ firstName: null });
    renderApp();
    expect((await screen.findByText('Welcome,')).closest('.welcome')?.textContent).toBe('Welcome, ann@shop.hk');
  });

  it('API calls and the socket handshake carry getToken()’s token, and a refreshed token once Clerk renewed it', async () => {
    const api = server(defaultAnswers);
    vi.stubGlobal('fetch', api.fn);
    signedIn();
    const user = userEvent.setup();
    renderApp();
    await screen.findByText('Welcome,');

    // An authenticated call made by the tool at start (the simulated-engine probe).
    await waitFor(() => expect(api.calls.some((c) => c.path === '/dev/simulator/outbox')).toBe(true));
    expect(api.calls.find((c) => c.path === '/dev/simulator/outbox')!.authorization).toBe('Bearer tok-1');

    // The socket handshake: auth is a callback, so every (re)connect asks for the current token.
    expect(sockets.opened).toHaveLength(1);
    const { opts, handlers } = sockets.opened[0]!;
    const handshake = await new Promise((resolve) => (opts.auth as (cb: (v: unknown) => void) => void)(resolve));
    expect(handshake).toEqual({ token: 'tok-1' });

    // The server answers the session check with a QR code; the test plays the socket.
    act(() => {
      handlers.get('connect')!();
      handlers.get('qr')!({ qr: 'QR-STRING-1', attempts: 1 });
    });
    expect(sockets.opened[0]!.emitted.find((e) => e[0] === 'createSession')?.[1]).toMatchObject({
      clerkUserId: 'user_clerk_1',
    });

    // Clerk renewed the session token (they live a minute): the next call and the next handshake use it.
    clerk.state.token = 'tok-2';
    await user.click(await screen.findByRole('button', { name: WEB_MESSAGES.simulateScan }));
    await waitFor(() => expect(api.calls.some((c) => c.path === '/dev/simulator/scan')).toBe(true));
    expect(api.calls.find((c) => c.path === '/dev/simulator/scan')!.authorization).toBe('Bearer tok-2');
    expect(await new Promise((resolve) => (opts.auth as (cb: (v: unknown) => void) => void)(resolve))).toEqual({
      token: 'tok-2',
    });
  });

  it('sign-out runs the cleanup with the token, then Clerk’s signOut', async () => {
    const api = server(defaultAnswers);
    vi.stubGlobal('fetch', api.fn);
    signedIn();
    const user = userEvent.setup();
    renderApp();
    await user.click(await screen.findByRole('button', { name: 'Sign Out' }));
    await waitFor(() => expect(clerk.state.calls).toContain('clerk.signOut'));
    const cleanup = api.calls.find((c) => c.path === '/api/session/cleanup')!;
    expect(cleanup).toMatchObject({
      method: 'POST',
      authorization: 'Bearer tok-1',
      body: { clerkUserId: 'user_clerk_1' },
    });
    expect(clerk.state.calls.indexOf('POST /api/session/cleanup')).toBeLessThan(
      clerk.state.calls.indexOf('clerk.signOut'),
    );
  });

  it('sign-out warns on a partial cleanup, errs on a failed one, and signs out either way', async () => {
    const partial = server((method, path) =>
      path === '/api/session/cleanup'
        ? {
            body: {
              success: false,
              partial: true,
              sessionsCleanedUp: 0,
              error: SESSION_MESSAGES.cleanupWhatsappLogoutFailed,
              message: SESSION_MESSAGES.cleanupPartial,
              failures: [{ step: 'whatsapp_logout', message: SESSION_MESSAGES.cleanupWhatsappLogoutFailed }],
            },
          }
        : defaultAnswers(method, path),
    );
    vi.stubGlobal('fetch', partial.fn);
    signedIn();
    const user = userEvent.setup();
    const first = renderApp();
    await user.click(await screen.findByRole('button', { name: 'Sign Out' }));
    expect(
      await screen.findByText(`${WEB_MESSAGES.cleanupPartial} ${SESSION_MESSAGES.cleanupWhatsappLogoutFailed}`),
    ).toBeTruthy();
    await waitFor(() => expect(clerk.state.calls).toContain('clerk.signOut'));
    first.unmount();

    clerk.state.calls = [];
    const failed = server((method, path) =>
      path === '/api/session/cleanup'
        ? { status: 503, body: { success: false, error: 'unavailable' } }
        : defaultAnswers(method, path),
    );
    vi.stubGlobal('fetch', failed.fn);
    renderApp();
    await user.click(await screen.findByRole('button', { name: 'Sign Out' }));
    expect(await screen.findByText(WEB_MESSAGES.cleanupFailed)).toBeTruthy();
    await waitFor(() => expect(clerk.state.calls).toContain('clerk.signOut'));
  });
});
