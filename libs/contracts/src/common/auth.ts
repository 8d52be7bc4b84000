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
