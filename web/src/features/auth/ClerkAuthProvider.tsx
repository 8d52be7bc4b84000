import { useMemo, type ReactNode } from 'react';
import { ClerkProvider, useAuth as useClerkAuth, useClerk, useUser } from '@clerk/react';
import { AuthContext, type Auth } from './auth-context.js';

/** Loaded only when VITE_CLERK_PUBLISHABLE_KEY is set, so the dev build never ships Clerk. */
export function ClerkAuthProvider({ publishableKey, children }: { publishableKey: string; children: ReactNode }) {
  return (
    <ClerkProvider publishableKey={publishableKey}>
      <ClerkBridge>{children}</ClerkBridge>
    </ClerkProvider>
  );
}

function ClerkBridge({ children }: { children: ReactNode }) {
  const { isLoaded, isSignedIn, getToken, signOut } = useClerkAuth();
  const { user } = useUser();
  const clerk = useClerk();

  const auth = useMemo<Auth>(
    () => ({
      mode: 'clerk',
      status: !isLoaded ? 'loading' : isSignedIn ? 'signed-in' : 'signed-out',
      user:
        isSignedIn && user
          ? { userId: user.id, email: user.primaryEmailAddress?.emailAddress ?? '', firstName: user.firstName ?? null }
          : null,
      getToken: () => getToken(),
      startSignIn: () => clerk.openSignIn(),
      signOut: () => signOut(),
    }),
    [isLoaded, isSignedIn, user, getToken, signOut, clerk],
  );
  return <AuthContext.Provider value={auth}>{children}</AuthContext.Provider>;
}
