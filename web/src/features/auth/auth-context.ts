import { createContext, useContext } from 'react';

export interface AuthUser {
  userId: string;
  email: string;
  firstName: string | null;
}

/** What the app needs from sign-in, whichever provider is behind it (Clerk or the dev issuer). */
export interface Auth {
  mode: 'clerk' | 'dev';
  status: 'loading' | 'signed-out' | 'signed-in';
  user: AuthUser | null;
  /** The current session token (Clerk refreshes its own; dev tokens live in localStorage). */
  getToken: () => Promise<string | null>;
  /** Opens sign-in (Clerk's modal or the dev form). */
  startSignIn: () => void;
  signOut: () => Promise<void>;
}

export const AuthContext = createContext<Auth | null>(null);

export function useAuth(): Auth {
  const auth = useContext(AuthContext);
  if (!auth) throw new Error('useAuth outside an auth provider');
  return auth;
}
