import { createHash, randomUUID } from 'node:crypto';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JSONWebKeySet } from 'jose';

export const DEV_ISSUER = 'urn:bns:dev-issuer';

export interface DevSignIn {
  token: string;
  userId: string;
  email: string;
  firstName: string | null;
}

/**
 * Local stand-in for Clerk: a key pair made at start, its JWKS, and tokens shaped like Clerk's
 * (sub, sid, iss, exp, RS256). The same e-mail always maps to the same user id.
 */
export class DevIssuer {
  private constructor(
    private readonly privateKey: CryptoKey,
    readonly jwks: JSONWebKeySet,
    private readonly ttlS: number,
  ) {}

  static async create(ttlS: number): Promise<DevIssuer> {
    const { publicKey, privateKey } = await generateKeyPair('RS256');
    const jwk = { ...(await exportJWK(publicKey)), kid: `dev-${randomUUID().slice(0, 8)}`, alg: 'RS256', use: 'sig' };
    return new DevIssuer(privateKey, { keys: [jwk] }, ttlS);
  }

  static userIdFor(email: string): string {
    return `user_dev_${createHash('sha256').update(email.trim().toLowerCase()).digest('hex').slice(0, 24)}`;
  }

  async signIn(email: string, firstName?: string): Promise<DevSignIn> {
    const normalized = email.trim().toLowerCase();
    const userId = DevIssuer.userIdFor(normalized);
    const token = await new SignJWT({ sid: `sess_${randomUUID()}`, email: normalized, ...(firstName ? { first_name: firstName } : {}) })
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
