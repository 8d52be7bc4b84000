import { createHash, randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { exportJWK, generateKeyPair, importJWK, SignJWT, type CryptoKey, type JSONWebKeySet, type JWK } from 'jose';

export const DEV_ISSUER = 'urn:bns:dev-issuer';

export interface DevSignIn {
  token: string;
  userId: string;
  email: string;
  firstName: string | null;
}

/**
 * Local stand-in for Clerk: a key pair, its JWKS, and tokens shaped like Clerk's (sub, sid, iss, exp,
 * RS256). The same e-mail always maps to the same user id. With a key file the key (and its `kid`)
 * outlives a restart, so signed-in users stay signed in; without one each start makes a new key.
 */
export class DevIssuer {
  private constructor(
    private readonly privateKey: CryptoKey,
    readonly jwks: JSONWebKeySet,
    private readonly ttlS: number,
  ) {}

  static async create(ttlS: number, keyFile?: string): Promise<DevIssuer> {
    const stored = keyFile && existsSync(keyFile) ? (JSON.parse(readFileSync(keyFile, 'utf8')) as JWK) : undefined;
    let privateJwk: JWK;
    if (stored) {
      privateJwk = stored;
    } else {
      const { privateKey } = await generateKeyPair('RS256', { extractable: true });
      privateJwk = {
        ...(await exportJWK(privateKey)),
        kid: `dev-${randomUUID().slice(0, 8)}`,
        alg: 'RS256',
        use: 'sig',
      };
      if (keyFile) saveKey(keyFile, privateJwk);
    }
    const privateKey = (await importJWK(privateJwk, 'RS256')) as CryptoKey;
    const { kty, n, e, kid } = privateJwk;
    return new DevIssuer(privateKey, { keys: [{ kty, n, e, kid, alg: 'RS256', use: 'sig' }] }, ttlS);
  }

  static userIdFor(email: string): string {
    return `user_dev_${createHash('sha256').update(email.trim().toLowerCase()).digest('hex').slice(0, 24)}`;
  }

  async signIn(email: string, firstName?: string): Promise<DevSignIn> {
    const normalized = email.trim().toLowerCase();
    const userId = DevIssuer.userIdFor(normalized);
    const token = await new SignJWT({
      sid: `sess_${randomUUID()}`,
      email: normalized,
      ...(firstName ? { first_name: firstName } : {}),
    })
      .setProtectedHeader({ alg: 'RS256', kid: String(this.jwks.keys[0]!.kid) })
      .setSubject(userId)
      .setIssuer(DEV_ISSUER)
      .setIssuedAt()
      .setNotBefore('0s')
      .setExpirationTime(`${this.ttlS}s`)
      .sign(this.privateKey);
    return { token, userId, email: normalized, firstName: firstName ?? null };
  }
}

/** Written whole (temp file + rename) and readable only by its owner: it signs every dev token. */
function saveKey(file: string, jwk: JWK): void {
  mkdirSync(dirname(file), { recursive: true });
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, JSON.stringify(jwk), { mode: 0o600 });
  renameSync(tmp, file);
}
