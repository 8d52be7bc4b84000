import {
  createLocalJWKSet,
  createRemoteJWKSet,
  importSPKI,
  jwtVerify,
  type JSONWebKeySet,
  type JWTVerifyGetKey,
  type CryptoKey,
} from 'jose';
import { CommonErrorCode, ErrorKind, MESSAGES } from '@bns/contracts';
import { AppError } from '@bns/service-kit';
import type { AuthUser } from './auth.types.js';
import { ClaimsCache } from './claims-cache.js';

export interface VerifierOptions {
  issuer: string;
  authorizedParties: readonly string[];
  clockToleranceS: number;
  /** Verified tokens remembered until they expire (0 = verify every time). */
  cacheMax?: number;
}

type KeySource = JWTVerifyGetKey | CryptoKey;

export function unauthorized(reason: string): AppError {
  return new AppError(ErrorKind.Unauthorized, CommonErrorCode.Unauthorized, MESSAGES.unauthorized, {
    details: { reason },
  });
}

/**
 * The one token check, for Clerk and for the dev issuer alike; only the key source differs.
 * Clerk session tokens carry no `aud`, so none is demanded; `azp` is checked by hand (jose has no
 * option for it) because skipping it lets another site's token in.
 */
/** Sessions signed out and remembered at most (each until its token would have expired); past it the oldest is forgotten. */
const SIGNED_OUT_MAX = 100_000;

export class TokenVerifier {
  private readonly cache: ClaimsCache;
  /** Sessions signed out (dev sign-out), by session id: until when their tokens would have been accepted. */
  private readonly signedOut = new Map<string, number>();
  private readonly signOutListeners: Array<(sessionId: string) => void> = [];
  /** Tokens refused although valid (issued before their account was deleted). */
  private refused: (user: AuthUser) => boolean = () => false;

  constructor(
    private readonly keys: KeySource,
    private readonly options: VerifierOptions,
  ) {
    this.cache = new ClaimsCache(options.cacheMax ?? 0);
  }

  static fromJwks(jwks: JSONWebKeySet, options: VerifierOptions): TokenVerifier {
    return new TokenVerifier(createLocalJWKSet(jwks), options);
  }

  static fromJwksUrl(url: string, options: VerifierOptions): TokenVerifier {
    return new TokenVerifier(
      createRemoteJWKSet(new URL(url), { cooldownDuration: 30_000, cacheMaxAge: 600_000 }),
      options,
    );
  }

  static async fromPem(pem: string, options: VerifierOptions): Promise<TokenVerifier> {
    return new TokenVerifier(await importSPKI(pem.replace(/\\n/g, '\n'), 'RS256'), options);
  }

  /** The claims of a token verified before and not yet expired, without a promise (the pollers' path). */
  cached(token: string): AuthUser | undefined {
    const user = this.cache.get(token);
    return user && !this.isSignedOut(user) && !this.refused(user) ? user : undefined;
  }

  /** Refuses, from now on, every valid token `refuse` says no to (checked on each use, cached or not). */
  refuseWhen(refuse: (user: AuthUser) => boolean): void {
    this.refused = refuse;
  }

  /**
   * The session was signed out: its tokens are refused until `untilMs` (when they expire anyway), and
   * whoever listens (the sockets of that session) hears it.
   */
  signOut(sessionId: string, untilMs: number): void {
    const now = Date.now();
    if (untilMs <= now) return;
    for (const [id, until] of this.signedOut) {
      if (until > now && this.signedOut.size < SIGNED_OUT_MAX) break;
      this.signedOut.delete(id);
    }
    this.signedOut.set(sessionId, Math.max(untilMs, this.signedOut.get(sessionId) ?? 0));
    for (const listener of this.signOutListeners) listener(sessionId);
  }

  onSignOut(listener: (sessionId: string) => void): void {
    this.signOutListeners.push(listener);
  }

  private isSignedOut(user: AuthUser): boolean {
    if (user.sessionId === undefined) return false;
    const until = this.signedOut.get(user.sessionId);
    return until !== undefined && until > Date.now();
  }

  async verify(token: string | undefined): Promise<AuthUser> {
    if (!token) throw unauthorized('missing token');
    const cached = this.cache.get(token);
    if (cached) {
      if (this.isSignedOut(cached)) throw unauthorized('signed out');
      if (this.refused(cached)) throw unauthorized('account deleted');
      return cached;
    }
    let payload;
    try {
      ({ payload } = await jwtVerify(token, this.keys as JWTVerifyGetKey, {
        issuer: this.options.issuer,
        algorithms: ['RS256'],
        clockTolerance: this.options.clockToleranceS,
        requiredClaims: ['sub', 'exp', 'iat'],
      }));
    } catch (err) {
      throw unauthorized((err as { code?: string }).code ?? 'invalid token');
    }
    const parties = this.options.authorizedParties;
    if (parties.length > 0 && (typeof payload.azp !== 'string' || !parties.includes(payload.azp))) {
      throw unauthorized('azp not allowed');
    }
    const str = (v: unknown) => (typeof v === 'string' && v !== '' ? v : undefined);
    // Accepted exactly as long as jose would accept it: until exp plus the clock tolerance.
    const expiresAtMs = (payload.exp! + this.options.clockToleranceS) * 1000;
    const user: AuthUser = {
      userId: payload.sub!,
      sessionId: str(payload.sid),
      email: str(payload.email),
      firstName: str(payload.first_name),
      issuedAtS: payload.iat,
      expiresAtMs,
    };
    if (this.isSignedOut(user)) throw unauthorized('signed out');
    if (this.refused(user)) throw unauthorized('account deleted');
    this.cache.set(token, user, expiresAtMs);
    return user;
  }
}

export function bearerToken(header: string | undefined): string | undefined {
  if (!header) return undefined;
  const match = /^Bearer\s+(\S+)$/i.exec(header);
  return match?.[1];
}
