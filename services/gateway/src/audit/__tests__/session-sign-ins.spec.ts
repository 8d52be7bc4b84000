import { describe, expect, it } from '@jest/globals';
import type { AuditKind } from '@bns/contracts';
import type { AuditTrail, AuditWho } from '../audit-trail.js';
import { sessionSignInId } from '../audit-trail.js';
import { SessionSignIns } from '../session-sign-ins.js';

/** What was recorded, in order (the trail publishes to NATS in the service; here it is only listened to). */
function recorder() {
  const recorded: Array<{ kind: AuditKind; who: AuditWho; eventId?: string }> = [];
  const trail = {
    record: async (kind: AuditKind, who: AuditWho, _details?: unknown, eventId?: string) => {
      recorded.push({ kind, who, eventId });
    },
  } as unknown as AuditTrail;
  return { recorded, signIns: new SessionSignIns(trail) };
}

const user = (sessionId: string | undefined) => ({
  userId: 'user_1',
  email: 'ann@shop.hk',
  sessionId,
  expiresAtMs: Date.now() + 60_000,
});

describe('Clerk sign-ins in the audit log', () => {
  it('records the first token of each session once, with an id every replica derives alike', () => {
    const { recorded, signIns } = recorder();
    signIns.saw(user('sess_a'), '203.0.113.9');
    signIns.saw(user('sess_a'), '203.0.113.9');
    signIns.saw(user('sess_b'), '198.51.100.1');
    signIns.saw(user(undefined), '198.51.100.1');
    expect(recorded).toEqual([
      {
        kind: 'auth.signed_in',
        who: { userId: 'user_1', actor: 'ann@shop.hk', ip: '203.0.113.9' },
        eventId: sessionSignInId('sess_a'),
      },
      {
        kind: 'auth.signed_in',
        who: { userId: 'user_1', actor: 'ann@shop.hk', ip: '198.51.100.1' },
        eventId: sessionSignInId('sess_b'),
      },
    ]);
    // Another replica (another instance) seeing sess_a derives the same id: the log keeps one entry.
    const other = recorder();
    other.signIns.saw(user('sess_a'), '203.0.113.9');
    expect(other.recorded[0]!.eventId).toBe(recorded[0]!.eventId);
    expect(sessionSignInId('sess_a')).not.toContain('sess_a');
  });
});
