import { act, render, screen } from '@testing-library/react';
import { describe, expect, it, vi } from 'vitest';
import { useAuth } from '../auth-context.js';
import { DEV_SESSION_KEY, loadDevSession } from '../dev-session.js';
import { DevAuthProvider } from '../DevAuthProvider.js';

/** A dev token of the gateway's shape: only its `exp` is read here. */
const token = (expSeconds: number) => `h.${btoa(JSON.stringify({ sub: 'u1', exp: expSeconds })).replace(/=+$/, '')}.s`;
const session = (exp: number, userId = 'u1') =>
  JSON.stringify({ token: token(exp), userId, email: `${userId}@shop.hk`, firstName: null });
const inAnHour = () => Math.floor(Date.now() / 1000) + 3600;

function Who() {
  const auth = useAuth();
  return (
    <>
      <p data-testid="who">{auth.status === 'signed-in' ? auth.user?.userId : auth.status}</p>
      <button onClick={() => void auth.signOut()}>Sign out</button>
    </>
  );
}

const renderAuth = () =>
  render(
    <DevAuthProvider>
      <Who />
    </DevAuthProvider>,
  );

/** What the browser does in the other tabs when one tab writes or removes the key. */
function otherTabWrote(newValue: string | null) {
  act(() => {
    window.dispatchEvent(new StorageEvent('storage', { key: DEV_SESSION_KEY, newValue, storageArea: localStorage }));
  });
}

describe('dev sign-in session', () => {
  it('is kept per browser (localStorage): a new tab starts signed in', () => {
    localStorage.setItem(DEV_SESSION_KEY, session(inAnHour()));
    renderAuth();
    expect(screen.getByTestId('who').textContent).toBe('u1');
    expect(sessionStorage.getItem(DEV_SESSION_KEY)).toBeNull();
  });

  it('an expired token is dropped and the tab starts signed out', () => {
    localStorage.setItem(DEV_SESSION_KEY, session(Math.floor(Date.now() / 1000) - 10));
    renderAuth();
    expect(screen.getByTestId('who').textContent).toBe('signed-out');
    expect(localStorage.getItem(DEV_SESSION_KEY)).toBeNull();
    expect(loadDevSession()).toBeNull();
  });

  it('a sign-out in another tab signs this tab out; a sign-in there signs this one in', () => {
    localStorage.setItem(DEV_SESSION_KEY, session(inAnHour()));
    renderAuth();
    localStorage.removeItem(DEV_SESSION_KEY);
    otherTabWrote(null);
    expect(screen.getByTestId('who').textContent).toBe('signed-out');

    const other = session(inAnHour(), 'u2');
    localStorage.setItem(DEV_SESSION_KEY, other);
    otherTabWrote(other);
    expect(screen.getByTestId('who').textContent).toBe('u2');

    // localStorage.clear() in another tab: key null.
    act(() => {
      window.dispatchEvent(new StorageEvent('storage', { key: null, newValue: null, storageArea: localStorage }));
    });
    expect(screen.getByTestId('who').textContent).toBe('signed-out');
  });

  it('an expired session written by another tab does not sign this one in', () => {
    renderAuth();
    otherTabWrote(session(Math.floor(Date.now() / 1000) - 10));
    expect(screen.getByTestId('who').textContent).toBe('signed-out');
  });

  it('a sign-out tells the gateway (POST /auth/dev/sign-out with the token) and is signed out even when the gateway cannot be reached', async () => {
    const stored = session(inAnHour());
    localStorage.setItem(DEV_SESSION_KEY, stored);
    const calls: Array<{ url: string; init?: RequestInit }> = [];
    vi.stubGlobal('fetch', async (url: string, init?: RequestInit) => {
      calls.push({ url, init });
      throw new TypeError('Failed to fetch');
    });
    try {
      renderAuth();
      await act(async () => screen.getByRole('button', { name: 'Sign out' }).click());
      expect(screen.getByTestId('who').textContent).toBe('signed-out');
      expect(localStorage.getItem(DEV_SESSION_KEY)).toBeNull();
      expect(calls).toEqual([
        {
          url: '/auth/dev/sign-out',
          init: { method: 'POST', headers: { Authorization: `Bearer ${JSON.parse(stored).token}` } },
        },
      ]);
    } finally {
      vi.unstubAllGlobals();
    }
  });
});
