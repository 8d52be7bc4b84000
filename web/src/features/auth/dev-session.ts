import type { AuthUser } from './auth-context.js';

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

export function loadDevSession(now = Date.now()): DevSession | null {
  try {
    const raw = sessionStorage.getItem(DEV_SESSION_KEY);
    if (!raw) return null;
    const session = JSON.parse(raw) as DevSession;
    if (typeof session.token !== 'string' || typeof session.userId !== 'string') return null;
    const exp = tokenExpiry(session.token);
    if (exp !== undefined && exp * 1000 <= now) {
      sessionStorage.removeItem(DEV_SESSION_KEY);
      return null;
    }
    return session;
  } catch {
    return null;
  }
}

export function saveDevSession(session: DevSession): void {
  sessionStorage.setItem(DEV_SESSION_KEY, JSON.stringify(session));
}

export function clearDevSession(): void {
  sessionStorage.removeItem(DEV_SESSION_KEY);
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
