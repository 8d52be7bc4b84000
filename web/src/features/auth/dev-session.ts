import type { AuthUser } from './auth-context.js';

/**
 * Kept in localStorage: one sign-in per browser, as with Clerk, so a second tab is signed in too and a
 * sign-out in one tab signs every tab out (the others hear it through the `storage` event).
 */
export const DEV_SESSION_KEY = 'bns.devSession';

export interface DevSession extends AuthUser {
  token: string;
}

/** Seconds since epoch at which a JWT expires, or undefined when it cannot be read. */
export function tokenExpiry(token: string): number | undefined {
  try {
    const payload = JSON.parse(atob(token.split('.')[1]!.replace(/-/g, '+').replace(/_/g, '/'))) as { exp?: unknown };
    return typeof payload.exp === 'number' ? payload.exp : undefined;
  } catch {
    return undefined;
  }
}

/** A stored session as text (what localStorage holds), or null when it is missing, unreadable or expired. */
export function parseDevSession(raw: string | null, now = Date.now()): DevSession | null {
  if (!raw) return null;
  try {
    const session = JSON.parse(raw) as DevSession;
    if (typeof session?.token !== 'string' || typeof session.userId !== 'string') return null;
    const exp = tokenExpiry(session.token);
    if (exp !== undefined && exp * 1000 <= now) return null;
    return session;
  } catch {
    return null;
  }
}

export function loadDevSession(now = Date.now()): DevSession | null {
  try {
    const raw = localStorage.getItem(DEV_SESSION_KEY);
    const session = parseDevSession(raw, now);
    // An expired or unreadable token is dropped, so the next load starts signed out.
    if (raw && !session) localStorage.removeItem(DEV_SESSION_KEY);
    return session;
  } catch {
    return null;
  }
}

export function saveDevSession(session: DevSession): void {
  localStorage.setItem(DEV_SESSION_KEY, JSON.stringify(session));
}

export function clearDevSession(): void {
  localStorage.removeItem(DEV_SESSION_KEY);
}

/** POST /auth/dev/sign-in: the gateway's local stand-in for Clerk (AUTH_MODE=dev). */
export async function devSignIn(email: string, firstName: string): Promise<DevSession> {
  const res = await fetch('/auth/dev/sign-in', {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify(firstName.trim() ? { email, firstName } : { email }),
  });
  const body = (await res.json().catch(() => ({}))) as Partial<DevSession> & { error?: string };
  if (!res.ok || typeof body.token !== 'string' || typeof body.userId !== 'string') {
    throw new Error(body.error ?? `Sign-in failed (${res.status})`);
  }
  return { token: body.token, userId: body.userId, email: body.email ?? email, firstName: body.firstName ?? null };
}

/**
 * POST /auth/dev/sign-out: the gateway refuses this sign-in's token from now on (in every tab). Best
 * effort: the session is cleared here whatever the answer, and an unreachable gateway only means the
 * token lives until it expires.
 */
export async function devSignOut(token: string): Promise<void> {
  await fetch('/auth/dev/sign-out', { method: 'POST', headers: { Authorization: `Bearer ${token}` } }).catch(
    () => undefined,
  );
}
