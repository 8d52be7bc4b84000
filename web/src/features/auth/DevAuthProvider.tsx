import { useCallback, useEffect, useMemo, useRef, useState, type FormEvent, type ReactNode } from 'react';
import { Dialog } from '../../components/Dialog.js';
import { AuthContext, type Auth } from './auth-context.js';
import {
  clearDevSession,
  DEV_SESSION_KEY,
  devSignIn,
  devSignOut,
  loadDevSession,
  parseDevSession,
  saveDevSession,
  type DevSession,
} from './dev-session.js';

/**
 * Sign-in without Clerk (no VITE_CLERK_PUBLISHABLE_KEY): the gateway's dev issuer hands out tokens of the
 * same shape; the token is kept in localStorage (until it expires or the user signs out), so a reload and
 * a second tab stay signed in, and a sign-out or a sign-in in another tab reaches this one.
 */
export function DevAuthProvider({ children }: { children: ReactNode }) {
  const [session, setSession] = useState<DevSession | null>(() => loadDevSession());
  const [formOpen, setFormOpen] = useState(false);
  const sessionRef = useRef(session);
  sessionRef.current = session;

  const getToken = useCallback(async () => {
    const current = sessionRef.current;
    if (!current) return null;
    // A dev token expires (DEV_TOKEN_TTL_S): drop it so the next call signs the user out cleanly.
    if (!loadDevSession()) return null;
    return current.token;
  }, []);

  // Another tab signed out (the key is gone), signed in as someone else, or its token expired.
  useEffect(() => {
    const onStorage = (e: StorageEvent) => {
      if (e.key !== DEV_SESSION_KEY && e.key !== null) return;
      const next = parseDevSession(e.key === null ? null : e.newValue);
      setSession((current) => (next?.token === current?.token ? current : next));
    };
    window.addEventListener('storage', onStorage);
    return () => window.removeEventListener('storage', onStorage);
  }, []);

  const signOut = useCallback(async () => {
    const token = sessionRef.current?.token;
    clearDevSession();
    setSession(null);
    if (token) await devSignOut(token);
  }, []);

  const auth = useMemo<Auth>(
    () => ({
      mode: 'dev',
      status: session ? 'signed-in' : 'signed-out',
      user: session ? { userId: session.userId, email: session.email, firstName: session.firstName } : null,
      getToken,
      startSignIn: () => setFormOpen(true),
      signOut,
    }),
    [session, getToken, signOut],
  );

  return (
    <AuthContext.Provider value={auth}>
      {children}
      {formOpen && (
        <DevSignInDialog
          onClose={() => setFormOpen(false)}
          onSignedIn={(s) => {
            saveDevSession(s);
            setSession(s);
            setFormOpen(false);
          }}
        />
      )}
    </AuthContext.Provider>
  );
}

function DevSignInDialog({ onClose, onSignedIn }: { onClose: () => void; onSignedIn: (s: DevSession) => void }) {
  const [email, setEmail] = useState('');
  const [firstName, setFirstName] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const submit = (e: FormEvent) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    devSignIn(email.trim(), firstName.trim()).then(onSignedIn, (err: Error) => {
      setError(err.message);
      setBusy(false);
    });
  };

  return (
    <Dialog
      title="Sign in"
      size="small"
      onClose={onClose}
      description="Development sign-in: no password, the same e-mail is always the same account."
    >
      <form className="form" onSubmit={submit} noValidate>
        <label className="field">
          <span>E-mail</span>
          <input
            type="email"
            name="email"
            autoComplete="email"
            required
            value={email}
            onChange={(e) => setEmail(e.target.value)}
          />
        </label>
        <label className="field">
          <span>First name (optional)</span>
          <input
            type="text"
            name="firstName"
            autoComplete="given-name"
            value={firstName}
            onChange={(e) => setFirstName(e.target.value)}
          />
        </label>
        {error && (
          <p className="field-error" role="alert">
            {error}
          </p>
        )}
        <div className="dialog-actions">
          <button type="button" className="button secondary" onClick={onClose}>
            Cancel
          </button>
          <button type="submit" className="button primary" disabled={busy || email.trim() === ''}>
            {busy ? 'Signing in…' : 'Sign In'}
          </button>
        </div>
      </form>
    </Dialog>
  );
}
