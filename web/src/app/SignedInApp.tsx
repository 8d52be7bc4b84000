import { useEffect, useState } from 'react';
import { Provider } from 'react-redux';
import { setUnauthorizedHandler } from '../api/api.js';
import { setTokenProvider } from '../api/token.js';
import { useAuth, type AuthUser } from '../features/auth/auth-context.js';
import { socketConnect, socketDisconnect } from '../features/connection/socketMiddleware.js';
import { resumeActiveJob } from '../features/job/thunks.js';
import { toast } from '../features/toasts/toasts.js';
import { WEB_MESSAGES } from '@bns/contracts';
import { makeStore } from './store.js';
import { ToolShell } from './ToolShell.js';

const CLIENT_ID_KEY = 'bns.clientId';

function clientId(): string {
  let id = sessionStorage.getItem(CLIENT_ID_KEY);
  if (!id) {
    id = crypto.randomUUID();
    sessionStorage.setItem(CLIENT_ID_KEY, id);
  }
  return id;
}

/** The signed-in tool: its own store per signed-in user, the socket opened for as long as it is shown. */
export default function SignedInApp({ user }: { user: AuthUser }) {
  const auth = useAuth();
  const [store] = useState(() => {
    setTokenProvider(auth.getToken);
    let expired = false;
    const onUnauthorized = () => {
      if (expired) return;
      expired = true;
      toast.error(WEB_MESSAGES.sessionExpired);
      void auth.signOut();
    };
    setUnauthorizedHandler(onUnauthorized);
    return makeStore({ session: { ...user, clientId: clientId() }, onUnauthorized });
  });

  useEffect(() => {
    setTokenProvider(auth.getToken);
  }, [auth.getToken]);

  useEffect(() => {
    store.dispatch(socketConnect());
    // A job still active on the server (a reload, a sign-in again) is shown and followed again.
    void store.dispatch(resumeActiveJob());
    return () => {
      store.dispatch(socketDisconnect());
      // Every keep-alive, timeout and job monitor stops with the tool.
      store.listener.clearListeners();
    };
  }, [store]);

  return (
    <Provider store={store}>
      <ToolShell />
    </Provider>
  );
}
