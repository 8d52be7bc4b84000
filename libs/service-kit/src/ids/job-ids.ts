import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { isUuid } from '@bns/contracts';

/**
 * Job ids the gateway can check without asking. A job id is a UUID of version 8 whose last
 * 48 bits are a MAC of its first 80 (74 of them random) and of the owning user's id, under a key the
 * jobs service keeps in its schema and hands to the gateway (`jobs.idScheme`). So a poll of a made-up
 * id, a mistyped one or another user's job is answered "not found" by the gateway from the id alone,
 * with no NATS round trip and no database read; the jobs service still checks every id it is asked
 * about, so a forged MAC only costs its sender the full trip.
 *
 * Jobs made before this scheme have random (version 4) ids: while any may exist (`legacyIds`), an id
 * of another version is passed on to the jobs service as before.
 */
export interface JobIdScheme {
  /** The MAC key (32 bytes). */
  key: Buffer;
  /** Whether jobs with ids of another form may exist (made before the scheme). */
  legacyIds: boolean;
}

/** Bytes of the MAC key. */
export const JOB_ID_KEY_BYTES = 32;
/** Hex digits of the id that the MAC covers (bytes 0..9) and that it fills (bytes 10..15). */
const BODY_HEX = 20;
const MAC_BYTES = 6;

function macOf(key: Buffer, userId: string, bodyHex: string): Buffer {
  return createHmac('sha256', key).update(userId).update('\n').update(bodyHex).digest().subarray(0, MAC_BYTES);
}

function format(hex: string): string {
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** A new job id of `userId`: version 8, RFC 9562 variant, 74 random bits, 48 bits of MAC. */
export function mintJobId(key: Buffer, userId: string): string {
  const body = randomBytes(10);
  body[6] = (body[6]! & 0x0f) | 0x80;
  body[8] = (body[8]! & 0x3f) | 0x80;
  const bodyHex = body.toString('hex');
  return format(bodyHex + macOf(key, userId, bodyHex).toString('hex'));
}

/** Whether the UUID `jobId` (any case) carries `userId`'s MAC under `key`; its version is not looked at. */
function macMatches(key: Buffer, userId: string, jobId: string): boolean {
  const hex = jobId.replaceAll('-', '').toLowerCase();
  if (!'89ab'.includes(hex[16]!)) return false;
  return timingSafeEqual(Buffer.from(hex.slice(BODY_HEX), 'hex'), macOf(key, userId, hex.slice(0, BODY_HEX)));
}

/** Whether the version nibble of the UUID `jobId` says 8 (the form `mintJobId` makes). */
const isVersion8 = (jobId: string) => jobId[14] === '8';

/** Whether `jobId` is one `mintJobId` made for `userId` under `key` (any case). */
export function isMintedJobId(key: Buffer, userId: string, jobId: string): boolean {
  return isUuid(jobId) && isVersion8(jobId) && macMatches(key, userId, jobId);
}

/**
 * Whether a job `jobId` of `userId` may exist: false when it certainly does not (not a UUID, a version 8
 * id whose MAC fails for this user, or any other id once no legacy ids exist), true otherwise.
 */
export function jobMayExist(scheme: JobIdScheme, userId: string, jobId: string): boolean {
  if (!isUuid(jobId)) return false;
  return isVersion8(jobId) ? macMatches(scheme.key, userId, jobId) : scheme.legacyIds;
}
