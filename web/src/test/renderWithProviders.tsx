import type { ReactElement, ReactNode } from 'react';
import { render, type RenderOptions } from '@testing-library/react';
import { Provider } from 'react-redux';
import { makeStore, type AppStore, type RootState } from '../app/store.js';
import { AuthContext, type Auth } from '../features/auth/auth-context.js';
import { Toaster } from '../features/toasts/Toaster.js';
import type { SocketFactory } from '../features/connection/socketMiddleware.js';

export const TEST_USER = { userId: 'user_test_1', email: 'ann@shop.hk', firstName: 'Ann', clientId: 'client-1' };

export const testAuth: Auth = {
  mode: 'dev',
  status: 'signed-in',
  user: TEST_USER,
  getToken: async () => 'test-token',
  startSignIn: () => undefined,
  signOut: async () => undefined,
};

export interface ExtendedRenderOptions extends Omit<RenderOptions, 'queries'> {
  preloadedState?: Partial<RootState>;
  store?: AppStore;
  socketFactory?: SocketFactory;
}

/** Renders with a real store (all slices, RTK Query, listeners), the auth context and the toaster. */
export function renderWithProviders(
  ui: ReactElement,
  { preloadedState, socketFactory, store, ...options }: ExtendedRenderOptions = {},
) {
  const theStore = store ?? makeStore({ session: TEST_USER, preloadedState, socketFactory });
  const Wrapper = ({ children }: { children: ReactNode }) => (
    <AuthContext.Provider value={testAuth}>
      <Provider store={theStore}>
        {children}
        <Toaster />
      </Provider>
    </AuthContext.Provider>
  );
  return { store: theStore, ...render(ui, { wrapper: Wrapper, ...options }) };
}

/** A connected WhatsApp, as after a `ready` event. */
export function connectedState(): Partial<RootState> {
  return {
    connection: {
      status: 'connected',
      qr: null,
      attempts: 0,
      maxAttemptsMessage: null,
      creatingMessage: null,
      sessionId: 's1',
      phoneNumber: '85291234567',
      socket: 'connected',
    },
  };
}

/** A fetch that answers from a table of handlers, recording every call. */
export function fakeFetch(
  handler: (
    method: string,
    url: URL,
    body: unknown,
  ) => { status?: number; body: unknown } | Promise<{ status?: number; body: unknown }>,
) {
  const calls: { method: string; url: URL; body: unknown; at: number; headers: Headers }[] = [];
  const fn = async (input: RequestInfo | URL, init?: RequestInit) => {
    const req = input instanceof Request ? input : new Request(input, init);
    const url = new URL(req.url);
    const text = await req.text();
    // A multipart upload is kept as its text; every other body the app sends is JSON.
    const multipart = req.headers.get('content-type')?.startsWith('multipart/form-data') ?? false;
    const body = text ? (multipart ? text : (JSON.parse(text) as unknown)) : undefined;
    calls.push({ method: req.method, url, body, at: Date.now(), headers: req.headers });
    const answer = await handler(req.method, url, body);
    return new Response(JSON.stringify(answer.body), {
      status: answer.status ?? 200,
      headers: { 'Content-Type': 'application/json' },
    });
  };
  return { fn, calls };
}
