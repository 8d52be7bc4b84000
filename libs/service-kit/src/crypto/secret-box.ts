import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

/** What a sealed text starts with: the format's version (a later key or algorithm gets another). */
const SEALED_PREFIX = 'v1.';
/** What sealed bytes start with (`BNS` + version 1): never the start of a zip or of JSON. */
const SEALED_MAGIC = Buffer.from([0x42, 0x4e, 0x53, 0x01]);
const IV_BYTES = 12;
const TAG_BYTES = 16;
const KEY_BYTES = 32;

/** The key's problem in plain words naming its variable, or undefined when it is 32 bytes of base64 or hex. */
export function secretKeyProblem(raw: string, name: string): string | undefined {
  return parseSecretKey(raw) ? undefined : `${name} must be 32 random bytes, base64 (44 characters) or hex (64)`;
}

/** 32 bytes from base64 (standard or URL-safe) or hex; undefined for anything else. */
export function parseSecretKey(raw: string): Buffer | undefined {
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
  constructor(keyName: string) {
    super(`a stored value could not be opened with ${keyName}`);
    this.name = 'SecretKeyMismatchError';
  }
}

/**
 * Values at rest sealed with AES-256-GCM under one key, each with its own random 96-bit IV: texts as
 * `v1.` + base64(iv | tag | ciphertext), bytes as `BNS\x01` | iv | tag | ciphertext. The database alone
 * never gives a value away; the tag makes a value sealed under another key (or altered) fail to open
 * instead of opening to garbage.
 */
export class SecretBox {
  private readonly key: Buffer;

  /** `keyName`: the variable the key comes from, named in every error. */
  constructor(
    rawKey: string,
    readonly keyName: string,
  ) {
    const key = parseSecretKey(rawKey);
    if (!key) throw new Error(secretKeyProblem(rawKey, keyName));
    this.key = key;
  }

  static isSealed(value: string): boolean {
    return value.startsWith(SEALED_PREFIX);
  }

  static isSealedBytes(value: Buffer): boolean {
    return value.length >= SEALED_MAGIC.length && value.subarray(0, SEALED_MAGIC.length).equals(SEALED_MAGIC);
  }

  seal(plain: string): string {
    return SEALED_PREFIX + this.encrypt(Buffer.from(plain, 'utf8')).toString('base64');
  }

  open(sealed: string): string {
    if (!SecretBox.isSealed(sealed)) throw new SecretKeyMismatchError(this.keyName);
    return this.decrypt(Buffer.from(sealed.slice(SEALED_PREFIX.length), 'base64')).toString('utf8');
  }

  sealBytes(plain: Buffer): Buffer {
    return Buffer.concat([SEALED_MAGIC, this.encrypt(plain)]);
  }

  openBytes(sealed: Buffer): Buffer {
    if (!SecretBox.isSealedBytes(sealed)) throw new SecretKeyMismatchError(this.keyName);
    return this.decrypt(sealed.subarray(SEALED_MAGIC.length));
  }

  private encrypt(plain: Buffer): Buffer {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    const body = Buffer.concat([cipher.update(plain), cipher.final()]);
    return Buffer.concat([iv, cipher.getAuthTag(), body]);
  }

  private decrypt(bytes: Buffer): Buffer {
    if (bytes.length < IV_BYTES + TAG_BYTES) throw new SecretKeyMismatchError(this.keyName);
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.key, bytes.subarray(0, IV_BYTES));
      decipher.setAuthTag(bytes.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
      return Buffer.concat([decipher.update(bytes.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]);
    } catch {
      throw new SecretKeyMismatchError(this.keyName);
    }
  }
}

/**
 * The key in force and the ones before it (rotation): values are sealed under the first and opened
 * under whichever opens them; `opened.rotated` says a value needs sealing again under the key in force.
 */
export class SecretKeyRing {
  readonly current: SecretBox;
  private readonly previous: SecretBox[];

  constructor(current: SecretBox, previous: SecretBox[] = []) {
    this.current = current;
    this.previous = previous;
  }

  sealBytes(plain: Buffer): Buffer {
    return this.current.sealBytes(plain);
  }

  /** Opens with the key in force, then the previous ones; throws SecretKeyMismatchError when none opens it. */
  openBytes(sealed: Buffer): { plain: Buffer; rotated: boolean } {
    for (const [i, box] of [this.current, ...this.previous].entries()) {
      try {
        return { plain: box.openBytes(sealed), rotated: i > 0 };
      } catch (err) {
        if (!(err instanceof SecretKeyMismatchError)) throw err;
      }
    }
    throw new SecretKeyMismatchError(this.current.keyName);
  }
}
