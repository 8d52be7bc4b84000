import { lazy, Suspense } from 'react';
import { Spinner } from '../components/Spinner.js';
import { useAuth } from '../features/auth/auth-context.js';
import { LandingPage } from '../features/landing/LandingPage.js';
import { Toaster } from '../features/toasts/Toaster.js';

// The signed-in tool (Redux, RTK Query, socket.io, the tabs) is its own chunk: the landing page stays light.
const SignedInApp = lazy(() => import('./SignedInApp.js'));

export function Root() {
  const auth = useAuth();
  return (
    <>
      {auth.status === 'loading' && (
        <div className="page-loading">
          <Spinner label="Loading…" />
        </div>
      )}
      {auth.status === 'signed-out' && <LandingPage />}
      {auth.status === 'signed-in' && auth.user && (
        <Suspense
          fallback={
            <div className="page-loading">
              <Spinner label="Loading your workspace…" />
            </div>
          }
        >
          {/* Keyed by user: another account signing in (e.g. in another tab) gets a store of its own. */}
          <SignedInApp key={auth.user.userId} user={auth.user} />
        </Suspense>
      )}
      <Toaster />
    </>
  );
}
