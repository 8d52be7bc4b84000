import { LIMITS } from './limits.js';
import { z } from './schema.js';

export const AUTH_MESSAGES = {
  invalidEmail: 'Please enter a valid e-mail address',
} as const;

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

/** POST /auth/dev/sign-in (dev issuer only): the same e-mail is always the same user. */
export const DevSignInBodySchema = z.object(
  {
    email: z
      .string({ error: AUTH_MESSAGES.invalidEmail })
      .transform((v) => v.trim())
      .pipe(z.string().max(LIMITS.emailMaxLength, AUTH_MESSAGES.invalidEmail).regex(EMAIL, AUTH_MESSAGES.invalidEmail))
      .meta({ example: 'owner@shop.hk', maxLength: LIMITS.emailMaxLength }),
    firstName: z
      .string()
      .optional()
      .catch(undefined)
      .transform((v) => (v !== undefined && v.trim() !== '' ? v.trim().slice(0, LIMITS.firstNameMaxLength) : undefined))
      .meta({ example: 'Ann' }),
  },
  { error: AUTH_MESSAGES.invalidEmail },
);

/**
 * POST /auth/dev/sign-out (dev issuer only) ends the caller's dev session: its token (and any other
 * token of the same sign-in) is refused from then on, on every gateway replica, which hear it on this
 * core NATS subject (outside `events.>`, so it never reaches a browser). `expiresAtMs`: when the
 * token would have expired anyway, so the replicas forget the sign-out then.
 */
export const DEV_SIGNED_OUT_SUBJECT = 'internal.gateway.dev-signed-out';
export const DevSignedOutNoticeSchema = z.object({
  sessionId: z.string().min(1).max(200),
  expiresAtMs: z.number().finite(),
});
export type DevSignedOutNotice = z.output<typeof DevSignedOutNoticeSchema>;
