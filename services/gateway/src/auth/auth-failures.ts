import { CommonErrorCode, ErrorKind, MESSAGES } from '@bns/contracts';
import { AppError } from '@bns/service-kit';
import { RateLimiter } from '../rate-limit/rate-limiter.js';

/**
 * Failed authentications per client address (HTTP and socket handshakes alike). Past the burst the
 * address gets 429 + Retry-After before its token is even looked at, so guessing tokens or flooding
 * with bad ones costs the attacker, not our CPU. Per replica: it is a brake, not an exact count.
 */
export class AuthFailures {
  private readonly limiter: RateLimiter;

  constructor(burst: number, perMinute: number) {
    this.limiter = new RateLimiter(perMinute / 60, burst);
  }

  /** The 429 to answer when this address has used up its failures, else undefined. */
  blocked(address: string): AppError | undefined {
    const retryAfterSeconds = this.limiter.peek(address);
    return retryAfterSeconds === undefined ? undefined : tooManyFailures(retryAfterSeconds);
  }

  record(address: string): void {
    this.limiter.take(address);
  }
}

export function tooManyFailures(retryAfterSeconds: number): AppError {
  return new AppError(ErrorKind.RateLimited, CommonErrorCode.RateLimited, MESSAGES.rateLimited, {
    details: { retryAfterSeconds },
  });
}
