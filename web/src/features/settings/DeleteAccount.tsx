import { useEffect, useId, useState } from 'react';
import { ACCOUNT_MESSAGES, type DeletionStatus } from '@bns/contracts';
import { api, pauseUnauthorized } from '../../api/api.js';
import { errorMessage } from '../../api/errors.js';
import { useAppDispatch, useAppSelector } from '../../app/hooks.js';
import { localStateCleared } from '../../app/store.js';
import { useAuth } from '../auth/auth-context.js';
import { devSignIn } from '../auth/dev-session.js';
import { socketDisconnect } from '../connection/socketMiddleware.js';
import { useDeleteAccountMutation } from './accountApi.js';

const POLL_MS = 1000;

/**
 * Delete account: the e-mail typed to confirm, then the deletion's progress by service (from
 * `GET /api/account/deletion`) and a final confirmation. Every token issued before the deletion is
 * refused from the moment it is requested, so the progress is read with a token made after it: Clerk
 * mints one by itself within its minute; with the dev sign-in, a new sign-in with the same e-mail.
 */
export function DeleteAccount() {
  const id = useId();
  const dispatch = useAppDispatch();
  const auth = useAuth();
  const session = useAppSelector((s) => s.session);
  const [typed, setTyped] = useState('');
  const [remove, removing] = useDeleteAccountMutation();
  const [status, setStatus] = useState<DeletionStatus | null>(null);
  const [started, setStarted] = useState(false);
  const matches = typed.trim().toLowerCase() === session.email.trim().toLowerCase() && typed.trim() !== '';

  useEffect(() => {
    if (!started) return;
    let stop = false;
    let devToken: string | null = null;
    const poll = async () => {
      while (!stop) {
        try {
          const token = devToken ?? (await auth.getToken());
          const res = await fetch(`${globalThis.location.origin}/api/account/deletion`, {
            headers: token ? { Authorization: `Bearer ${token}` } : {},
          });
          if (res.status === 401 && auth.mode === 'dev') {
            devToken = (await devSignIn(session.email, session.firstName ?? '')).token;
            continue;
          }
          if (res.ok) {
            const body = (await res.json()) as DeletionStatus;
            setStatus(body);
            if (body.status === 'done') return;
          }
        } catch {
          // The next poll tries again.
        }
        await new Promise((r) => setTimeout(r, POLL_MS));
      }
    };
    void poll();
    return () => {
      stop = true;
    };
  }, [started, auth, session.email, session.firstName]);

  const finish = async () => {
    dispatch(api.util.resetApiState());
    dispatch(localStateCleared());
    pauseUnauthorized(false);
    await auth.signOut();
  };

  if (started) {
    const done = status?.status === 'done';
    return (
      <div className="deletion-progress" data-testid="deletion-progress">
        <p role="status">{done ? ACCOUNT_MESSAGES.deletionDone : ACCOUNT_MESSAGES.deletionProgress}</p>
        {status && (
          <ul className="plain-list">
            {Object.entries(status.services).map(([service, s]) => (
              <li key={service}>
                {service}:{' '}
                {s.status === 'done' ? `done${s.rows !== undefined ? ` (${s.rows} rows)` : ''}` : 'deleting…'}
              </li>
            ))}
          </ul>
        )}
        {done && (
          <button type="button" className="button primary" onClick={() => void finish()}>
            Sign out
          </button>
        )}
      </div>
    );
  }

  return (
    <form
      className="delete-account"
      onSubmit={(e) => {
        e.preventDefault();
        if (!matches) return;
        // From here every older token is refused: the app must not sign out on the 401s that follow.
        pauseUnauthorized(true);
        void remove(typed.trim())
          .unwrap()
          .then(() => {
            dispatch(socketDisconnect());
            setStarted(true);
          })
          .catch(() => pauseUnauthorized(false));
      }}
    >
      <p>{ACCOUNT_MESSAGES.deleteWarning}</p>
      <div className="field">
        <label htmlFor={id}>{ACCOUNT_MESSAGES.deleteConfirmLabel}</label>
        <input
          id={id}
          type="email"
          autoComplete="off"
          data-testid="delete-email"
          value={typed}
          onChange={(e) => setTyped(e.target.value)}
        />
      </div>
      {removing.error && (
        <p className="field-error" role="alert">
          {errorMessage(removing.error)}
        </p>
      )}
      <button type="submit" className="button danger" disabled={!matches || removing.isLoading}>
        {ACCOUNT_MESSAGES.deleteButton}
      </button>
    </form>
  );
}
