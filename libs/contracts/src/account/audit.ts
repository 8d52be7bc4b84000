import { EventEnvelopeSchema } from '../common/events.js';
import { RpcUserIdSchema, z } from '../common/schema.js';
import { ACCOUNT_LIMITS as L } from './limits.js';
import { ACCOUNT_MESSAGES as M } from './messages.js';

/**
 * What the audit log records, one kind per action. Wire names: stored in the log and shown by the
 * web; never rename one (entries already written keep the old name).
 */
export const AUDIT_KINDS = [
  'auth.signed_in',
  'auth.signed_out',
  'whatsapp.linked',
  'whatsapp.unlinked',
  'api_key.created',
  'api_key.revoked',
  'webhook.added',
  'webhook.changed',
  'webhook.removed',
  'policy.changed',
  'campaign.started',
  'campaign.paused',
  'campaign.resumed',
  'campaign.cancelled',
  'export.downloaded',
  'takeout.downloaded',
  'opt_out.added',
  'opt_out.removed',
  'account.deletion_requested',
] as const;
export type AuditKind = (typeof AUDIT_KINDS)[number];

/** The one subject every service publishes an audit entry on, from where the action is performed. */
export const AUDIT_RECORDED = 'events.audit.recorded';

/** What an entry may say beside its kind (ids, a name, a count): never message text or a phone number list. */
const AuditDetailsSchema = z.record(z.string().max(64), z.union([z.string().max(200), z.number(), z.boolean()]));

/**
 * `events.audit.recorded`: one action of the user. `actor` is the person (their e-mail, or their user id
 * when the sign-in carries none), an API key (`key:<prefix>`) or `whatsapp` (the phone did it);
 * `address` is the client's address already truncated (`truncateAddress`), absent when no client asked.
 */
export const AuditRecordedEventSchema = EventEnvelopeSchema.extend({
  kind: z.enum(AUDIT_KINDS),
  actor: z.string().min(1).max(320),
  address: z.string().max(64).optional(),
  details: AuditDetailsSchema.optional(),
});
export type AuditRecordedEvent = z.output<typeof AuditRecordedEventSchema>;

/** One entry as `GET /api/audit` and `GET /v1/audit` show it. */
export const AuditEntrySchema = z.object({
  kind: z.enum(AUDIT_KINDS),
  at: z.iso.datetime(),
  actor: z.string(),
  address: z.string().nullable(),
  details: AuditDetailsSchema,
});
export type AuditEntry = z.output<typeof AuditEntrySchema>;

export const AuditPageSchema = z.object({
  entries: z.array(AuditEntrySchema),
  nextCursor: z.string().nullable(),
});
export type AuditPage = z.output<typeof AuditPageSchema>;

/** `?kind=&cursor=&limit=` of the audit log; an empty value counts as not given. */
export const AuditQuerySchema = z.object({
  kind: z
    .unknown()
    .optional()
    .transform((v, ctx) => {
      if (v === undefined || v === '') return undefined;
      if (typeof v !== 'string' || !(AUDIT_KINDS as readonly string[]).includes(v)) {
        ctx.addIssue({ code: 'custom', message: M.auditKindInvalid });
        return z.NEVER;
      }
      return v as AuditKind;
    }),
  cursor: z
    .unknown()
    .optional()
    .transform((v, ctx) => {
      if (v === undefined || v === '') return undefined;
      if (typeof v !== 'string' || v.length > 100 || !/^[A-Za-z0-9_-]+$/.test(v)) {
        ctx.addIssue({ code: 'custom', message: M.auditCursorInvalid });
        return z.NEVER;
      }
      return v;
    }),
  limit: z
    .unknown()
    .optional()
    .transform((v, ctx) => {
      if (v === undefined || v === '') return L.auditPageDefault;
      const n = typeof v === 'number' ? v : typeof v === 'string' && /^\d+$/.test(v.trim()) ? Number(v.trim()) : NaN;
      if (!Number.isInteger(n) || n < 1 || n > L.auditPageMax) {
        ctx.addIssue({ code: 'custom', message: M.auditLimitInvalid });
        return z.NEVER;
      }
      return n;
    }),
});
export type AuditQuery = z.output<typeof AuditQuerySchema>;

export const AuditListRequestSchema = z.object({
  userId: RpcUserIdSchema,
  kind: z.enum(AUDIT_KINDS).optional(),
  cursor: z.string().max(100).optional(),
  limit: z.int().min(1).max(L.auditPageMax),
});
export type AuditListRequest = z.output<typeof AuditListRequestSchema>;

/**
 * The client's address as the audit log keeps it: IPv4 to its /24 (`203.0.113.0/24`), IPv6 to its /48
 * (`2001:db8:1::/48`); an IPv4-mapped IPv6 address counts as IPv4. Anything else is not kept.
 */
export function truncateAddress(raw: string | undefined): string | undefined {
  if (!raw) return undefined;
  const ip = raw.trim().replace(/^::ffff:(?=\d+\.\d+\.\d+\.\d+$)/i, '');
  const v4 = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(ip);
  if (v4) {
    const parts = v4.slice(1).map(Number);
    if (parts.some((p) => p > 255)) return undefined;
    return `${parts[0]}.${parts[1]}.${parts[2]}.0/24`;
  }
  const groups = expandIpv6(ip.replace(/%.*$/, ''));
  if (!groups) return undefined;
  const kept = groups.slice(0, 3).map((g) => g.replace(/^0+(?=.)/, ''));
  return `${kept.join(':')}::/48`;
}

function expandIpv6(ip: string): string[] | undefined {
  if (!/^[0-9a-f:]+$/i.test(ip) || ip.split('::').length > 2) return undefined;
  const [head, tail] = ip.includes('::') ? ip.split('::') : [ip, undefined];
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const missing = 8 - left.length - right.length;
  if ((tail === undefined && missing !== 0) || (tail !== undefined && missing < 1)) return undefined;
  const groups = [...left, ...Array<string>(tail === undefined ? 0 : missing).fill('0'), ...right];
  if (groups.length !== 8 || groups.some((g) => !/^[0-9a-f]{1,4}$/i.test(g))) return undefined;
  return groups.map((g) => g.toLowerCase());
}

/** The actor an API key is recorded as: its prefix, the part its owner sees in the key list. */
export function apiKeyActor(prefix: string): string {
  return `key:${prefix}`;
}
