import type { Request } from 'express';

export interface AuthUser {
  userId: string;
  sessionId?: string;
  email?: string;
  firstName?: string;
  /** The token's iat (epoch seconds): a token issued before the account's deletion is refused. */
  issuedAtS?: number;
  /** When the token stops being accepted (its exp plus the clock tolerance), epoch ms. */
  expiresAtMs: number;
}

/** `user` is set by the authenticate middleware for a valid token; `authError` says why a token was refused. */
export type AuthedRequest = Request & { user?: AuthUser; authError?: unknown };
