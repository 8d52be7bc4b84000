import type { Request } from 'express';

export interface AuthUser {
  userId: string;
  sessionId?: string;
  email?: string;
  firstName?: string;
}

export type AuthedRequest = Request & { user?: AuthUser };
