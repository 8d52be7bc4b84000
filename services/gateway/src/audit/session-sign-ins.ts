import { Injectable } from '@nestjs/common';
import type { AuthUser } from '../auth/auth.types.js';
import { AuditTrail, personOf, sessionSignInId } from './audit-trail.js';

/** Sessions remembered per replica; past this the oldest is forgotten (a repeat entry is deduplicated anyway). */
const SESSIONS_MAX = 50_000;

/**
 * With Clerk, a sign-in happens at Clerk, not here: it is recorded the first time this gateway sees a
 * token of a session (`sid`) it has not seen. The entry's id comes from the session id, so replicas
 * (or this one after a restart) that see the same session add no second entry.
 */
@Injectable()
export class SessionSignIns {
  private readonly seen = new Set<string>();

  constructor(private readonly trail: AuditTrail) {}

  saw(user: AuthUser, ip: string | undefined): void {
    const sid = user.sessionId;
    if (!sid || this.seen.has(sid)) return;
    if (this.seen.size >= SESSIONS_MAX) this.seen.delete(this.seen.values().next().value!);
    this.seen.add(sid);
    void this.trail.record('auth.signed_in', personOf(user, ip), undefined, sessionSignInId(sid));
  }
}
