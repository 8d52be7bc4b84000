import { exportSPKI, generateKeyPair, SignJWT, type CryptoKey, type JWTPayload } from 'jose';

export interface DevSession {
  token: string;
  userId: string;
  email: string;
  firstName?: string;
}

/** Signs in through the gateway's dev issuer, as the web app does without Clerk. */
export async function devSignIn(gatewayUrl: string, email: string, firstName?: string): Promise<DevSession> {
  const res = await fetch(`${gatewayUrl}/auth/dev/sign-in`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email, firstName }),
  });
  if (res.status !== 200) throw new Error(`dev sign-in failed: ${res.status} ${await res.text()}`);
  return (await res.json()) as DevSession;
}

/** A stand-in for Clerk's signing key, to test the production verification path end to end. */
export interface TestIssuer {
  issuer: string;
  publicKeyPem: string;
  sign(
    claims: JWTPayload & { sub: string },
    options?: { alg?: string; expiresIn?: string | number; notBefore?: string | number; kid?: string },
  ): Promise<string>;
}

export async function createTestIssuer(issuer = 'https://clerk.test.example'): Promise<TestIssuer> {
  const { publicKey, privateKey } = await generateKeyPair('RS256', { extractable: true });
  return {
    issuer,
    publicKeyPem: await exportSPKI(publicKey as CryptoKey),
    async sign(claims, options = {}) {
      let jwt = new SignJWT(claims)
        .setProtectedHeader({ alg: options.alg ?? 'RS256', kid: options.kid ?? 'test' })
        .setIssuer(typeof claims.iss === 'string' ? claims.iss : issuer)
        .setIssuedAt()
        .setExpirationTime(options.expiresIn ?? '5m');
      if (options.notBefore !== undefined) jwt = jwt.setNotBefore(options.notBefore);
      return jwt.sign(privateKey);
    },
  };
}

/** An unsigned `alg: none` token, which every verifier must refuse. */
export function unsignedToken(claims: Record<string, unknown>): string {
  const b64 = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url');
  return `${b64({ alg: 'none', typ: 'JWT' })}.${b64(claims)}.`;
}

/**
 * The token with one byte of its signature changed. (Changing its last characters is not enough: the last
 * base64url character carries padding bits a decoder ignores, so "…xw" → "…xx" can decode to the same bytes.)
 */
export function forgedSignature(token: string): string {
  const [header, payload, signature] = token.split('.');
  const bytes = Buffer.from(signature, 'base64url');
  bytes[bytes.length >> 1] ^= 0x01;
  return `${header}.${payload}.${bytes.toString('base64url')}`;
}
