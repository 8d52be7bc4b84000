import { RpcIdSchema, RpcUserIdSchema, hasNul, isBlankText, z } from '../common/schema.js';
import { INTEGRATIONS_LIMITS as L } from './limits.js';
import { INTEGRATIONS_MESSAGES as M } from './messages.js';

/** What a key may do. `read` covers every GET of /v1. */
export const API_KEY_SCOPES = [
  'messages:send',
  'campaigns:write',
  'read',
  'templates:write',
  'contacts:write',
] as const;
export type ApiKeyScope = (typeof API_KEY_SCOPES)[number];

/** `POST /api/keys` `{name, scopes}`. */
export const ApiKeyCreateSchema = z.object({
  name: z
    .string({ error: M.keyNameRequired })
    .transform((s) => s.trim())
    .refine((s) => s !== '' && !isBlankText(s), M.keyNameRequired)
    .refine((s) => s.length <= L.apiKeyNameMax, M.keyNameTooLong)
    .refine((s) => !hasNul(s), M.keyNameRequired)
    .meta({ example: 'Shop backend', maxLength: L.apiKeyNameMax }),
  scopes: z
    .array(z.enum(API_KEY_SCOPES, { error: M.scopeUnknown }), { error: M.scopesRequired })
    .min(1, M.scopesRequired)
    .max(API_KEY_SCOPES.length * 2, M.scopeUnknown)
    .transform((s) => [...new Set(s)])
    .meta({ example: ['messages:send', 'read'] }),
});
export type ApiKeyCreate = z.output<typeof ApiKeyCreateSchema>;

/** A key as lists show it: never its secret, nor its hash. */
export const ApiKeySchema = z.object({
  id: z.string(),
  name: z.string(),
  /** `bns_` and the first characters of the secret, to tell keys apart. */
  prefix: z.string(),
  scopes: z.array(z.enum(API_KEY_SCOPES)),
  createdAt: z.iso.datetime(),
  lastUsedAt: z.iso.datetime().nullable(),
});
export type ApiKey = z.output<typeof ApiKeySchema>;
/** The answer of a create: the only time `secret` is shown. */
export const ApiKeyCreatedSchema = ApiKeySchema.extend({ secret: z.string() });
export type ApiKeyCreated = z.output<typeof ApiKeyCreatedSchema>;

/** Who a valid key acts for, as the gateway caches it. */
export interface ApiKeyPrincipal {
  keyId: string;
  userId: string;
  scopes: ApiKeyScope[];
}

/**
 * Published on core NATS by the integrations replica that revoked a key, after the commit; every
 * gateway replica drops it from its cache at once. Outside `events.>`: never sent to a browser.
 */
export const API_KEY_REVOKED_SUBJECT = 'internal.integrations.key-revoked';
export const ApiKeyRevokedNoticeSchema = z.object({ keyId: z.string().min(1).max(100) });
export type ApiKeyRevokedNotice = z.output<typeof ApiKeyRevokedNoticeSchema>;
/** Published by gateways (at most once a minute per key and replica): the key's last-used time. */
export const API_KEY_USED_SUBJECT = 'internal.integrations.key-used';
export const ApiKeyUsedNoticeSchema = z.object({ keyId: z.string().min(1).max(100), at: z.iso.datetime() });
export type ApiKeyUsedNotice = z.output<typeof ApiKeyUsedNoticeSchema>;

// ---- NATS requests ----
export const IntegrationsUserRequestSchema = z.object({ userId: RpcUserIdSchema });
export const ApiKeyCreateRequestSchema = z.object({ userId: RpcUserIdSchema, body: z.unknown().optional() });
export const ApiKeyRefSchema = z.object({ userId: RpcUserIdSchema, keyId: RpcIdSchema });
/** `hash`: SHA-256 of the whole secret, hex. The gateway never sends the secret itself. */
export const ApiKeyVerifyRequestSchema = z.object({ hash: z.string().regex(/^[0-9a-f]{64}$/) });

/** `bns_` + base64url: what a key looks like (a cheap check before any hashing or lookup). */
export function looksLikeApiKey(token: string): boolean {
  return (
    token.startsWith('bns_') && token.length >= 4 + 43 && token.length <= 200 && /^bns_[A-Za-z0-9_-]+$/.test(token)
  );
}
