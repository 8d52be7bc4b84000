import { LIMITS } from '../common/limits.js';
import { normalizePhone } from '../common/phone.js';
import { ClerkUserIdSchema, RpcUserIdSchema, z } from '../common/schema.js';
import { SESSION_MESSAGES } from './messages.js';
import { MediaRefSchema } from '../media/schemas.js';

/** POST /api/session/cleanup (SPEC §7): sign-out cleanup of the caller's WhatsApp session. */
export const SessionCleanupBodySchema = z.object(
  {
    clerkUserId: z
      .string({ error: SESSION_MESSAGES.clerkUserIdRequired })
      .min(1, SESSION_MESSAGES.clerkUserIdRequired)
      .pipe(ClerkUserIdSchema),
  },
  { error: SESSION_MESSAGES.clerkUserIdRequired },
);

/** success true: all cleaned up; a partial cleanup is also a 200, with the steps that failed. */
export const SessionCleanupAnswerSchema = z.union([
  z.object({
    success: z.literal(true),
    sessionsCleanedUp: z.int(),
    message: z.string().meta({ example: SESSION_MESSAGES.cleanupDone }),
  }),
  z.object({
    success: z.literal(false),
    partial: z.literal(true),
    sessionsCleanedUp: z.int(),
    error: z.string(),
    message: z.string().meta({ example: SESSION_MESSAGES.cleanupPartial }),
    failures: z.array(
      z.object({ step: z.enum(['whatsapp_logout', 'stored_link', 'stored_login']), message: z.string() }),
    ),
  }),
]);

/** Socket `requestPairingCode` {phoneNumber}: link by phone number instead of a QR scan. */
export const RequestPairingCodePayloadSchema = z.object({ phoneNumber: z.string().max(40) });
export type RequestPairingCodePayload = z.input<typeof RequestPairingCodePayloadSchema>;

/**
 * The number a pairing code is asked for, as WhatsApp takes it (international digits, 852 put before
 * an 8-digit Hong Kong number); undefined when it is not one.
 */
export function pairingPhoneNumber(value: unknown): string | undefined {
  return normalizePhone(value, 'international');
}

/** `ABCDEFGH` → `ABCD-EFGH`, as WhatsApp shows a pairing code. */
export function formatPairingCode(code: string): string {
  return code.length === LIMITS.pairingCodeLength ? `${code.slice(0, 4)}-${code.slice(4)}` : code;
}

/** `sessions.<shard>.pairing.request`: the phone number (checked by the service with `pairingPhoneNumber`). */
export const PairingCodeRequestSchema = z.object({ userId: RpcUserIdSchema, phoneNumber: z.string() });

/** `sessions.<shard>.simulator.pair`: the code the simulated phone enters (separators ignored). */
export const SimulatorPairRequestSchema = z.object({ userId: RpcUserIdSchema, code: z.string() });

/** Socket `createSession` (SPEC §7): {id, clerkUserId, isExplicitRequest?}. */
export const CreateSessionPayloadSchema = z.object({
  id: z.string().max(LIMITS.clientIdMaxLength).optional(),
  clerkUserId: z.string().max(LIMITS.userIdMaxLength),
  isExplicitRequest: z.boolean().optional(),
});
export type CreateSessionPayload = z.input<typeof CreateSessionPayloadSchema>;

/** `sessions.<shard>.connect`: link (or report) the user's WhatsApp account. */
export const SessionConnectRequestSchema = z.object({ userId: RpcUserIdSchema, explicit: z.boolean().optional() });

/** The longest `recordWaitMs` a send may ask for. */
export const SEND_RECORD_WAIT_MAX_MS = 100;

/**
 * `sessions.<shard>.send`: one message from the user's linked account. The idempotency key
 * (`idempotencyKeyOf(jobId, recipient)`) makes a retry safe: a key that was already sent answers the
 * first result and sends nothing. `jobId` is the job the send belongs to, said outright (optional while
 * senders move to it; until then the sessions service may still read it from the key).
 */
export const SessionSendRequestSchema = z.object({
  userId: RpcUserIdSchema,
  to: z
    .string()
    .regex(
      new RegExp(`^\\d{${LIMITS.templatePhoneMinDigits},${LIMITS.templatePhoneMaxDigits}}$`),
      'to must be 8 to 15 digits',
    ),
  text: z.string().min(1).max(LIMITS.messageMaxLength),
  idempotencyKey: z.string().min(1),
  jobId: z.string().min(1).optional(),
  /**
   * How long the record that the message went out may wait to share its commit with other sends':
   * the caller's next send for this account is far enough away that a reply this much later changes
   * nothing. The message itself leaves at once; the reply comes once the record is committed.
   * Absent or 0: recorded at once (a caller sending back to back).
   */
  recordWaitMs: z.int().min(0).max(SEND_RECORD_WAIT_MAX_MS).optional(),
  /** The job's attachment (its reference, never its bytes): sent with `text` as its caption. */
  media: MediaRefSchema.optional(),
});

/** `sessions.<shard>.status`, `.logout` and the simulator's scan, disconnect and outbox: the acting user only. */
export const SessionUserRequestSchema = z.object({ userId: RpcUserIdSchema });

/**
 * `sessions.<shard>.simulator.inbound`: `from` or `lid` (one of them), `text`, and optionally the id of the
 * message it answers; the sessions service checks their forms and the length of `text`.
 */
export const SimulatorInboundRequestSchema = z.object({
  userId: RpcUserIdSchema,
  from: z.string().optional(),
  lid: z.string().optional(),
  text: z.string(),
  quotedMessageId: z.string().optional(),
});
