import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

/** What a sealed value starts with: the format's version (a later key or algorithm gets another). */
const SEALED_PREFIX = 'v1.';
const IV_BYTES = 12;
const TAG_BYTES = 16;
const KEY_BYTES = 32;
/** What the key check row holds once opened: proof that the key in force is the one the rows were sealed with. */
export const KEY_CHECK_PLAINTEXT = 'bns-integrations-key-check';

/** The key's problem in plain words (for the start-up check), or undefined when it is 32 bytes of base64 or hex. */
export function secretKeyProblem(raw: string): string | undefined {
  return parseKey(raw)
    ? undefined
    : 'INTEGRATIONS_SECRET_KEY must be 32 random bytes, base64 (44 characters) or hex (64)';
}

function parseKey(raw: string): Buffer | undefined {
  const text = raw.trim();
  if (/^[0-9a-fA-F]{64}$/.test(text)) return Buffer.from(text, 'hex');
  if (/^[A-Za-z0-9+/_-]{43}=?$/.test(text)) {
    const key = Buffer.from(text.replace(/-/g, '+').replace(/_/g, '/'), 'base64');
    if (key.length === KEY_BYTES) return key;
  }
  return undefined;
}

/** A value that is not sealed under this key (another key, or a damaged row). */
export class SecretKeyMismatchError extends Error {
  constructor() {
    super('a stored secret could not be opened with INTEGRATIONS_SECRET_KEY');
    this.name = 'SecretKeyMismatchError';
  }
}

/**
 * Webhook signing secrets at rest: AES-256-GCM under INTEGRATIONS_SECRET_KEY, each value with its own
 * random 96-bit IV, stored as `v1.` + base64(iv | tag | ciphertext). The database alone never gives
 * a secret away; the tag makes a value sealed under another key (or altered) fail to open instead of
 * opening to garbage. API keys are not here: only their hashes are stored.
 */
export class SecretBox {
  private readonly key: Buffer;

  constructor(rawKey: string) {
    const key = parseKey(rawKey);
    if (!key) throw new Error(secretKeyProblem(rawKey));
    this.key = key;
  }

  static isSealed(value: string): boolean {
    return value.startsWith(SEALED_PREFIX);
  }

  seal(plain: string): string {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    return SEALED_PREFIX + Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64');
  }

  open(sealed: string): string {
    if (!SecretBox.isSealed(sealed)) throw new SecretKeyMismatchError();
    const bytes = Buffer.from(sealed.slice(SEALED_PREFIX.length), 'base64');
    if (bytes.length < IV_BYTES + TAG_BYTES) throw new SecretKeyMismatchError();
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.key, bytes.subarray(0, IV_BYTES));
      decipher.setAuthTag(bytes.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
      return Buffer.concat([decipher.update(bytes.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString('utf8');
    } catch {
      throw new SecretKeyMismatchError();
    }
  }
}
