import { randomBytes } from 'node:crypto';
import type { SecretKeyRing } from '@bns/service-kit';
import type { SimAuthRepository } from './sim-auth.repository.js';

/**
 * The simulated engine's login, shaped like a real engine's credentials (the account's number and its
 * keys), as the bytes that are sealed and stored.
 */
export function simulatedCreds(phoneNumber: string): Buffer {
  const key = () => randomBytes(32).toString('base64');
  return Buffer.from(
    JSON.stringify({
      me: { id: `${phoneNumber}@s.whatsapp.net` },
      noiseKey: key(),
      identityKey: key(),
      advSecret: key(),
    }),
  );
}

function phoneOfCreds(creds: Buffer): string | undefined {
  try {
    const id = (JSON.parse(creds.toString('utf8')) as { me?: { id?: unknown } }).me?.id;
    return typeof id === 'string' ? id.split('@')[0] : undefined;
  } catch {
    return undefined;
  }
}

/** The simulated engine's logins in `sim_auth`, sealed under SESSION_STATE_KEY. */
export class SimAuthStore {
  constructor(
    private readonly repo: SimAuthRepository,
    private readonly ring: SecretKeyRing,
  ) {}

  save(userId: string, phoneNumber: string): Promise<void> {
    return this.repo.save(userId, this.ring.sealBytes(simulatedCreds(phoneNumber)));
  }

  /** The number the stored login is for; undefined when there is none (a wrong key throws). */
  async phoneNumber(userId: string): Promise<string | undefined> {
    const data = await this.repo.load(userId);
    return data ? phoneOfCreds(this.ring.openBytes(data).plain) : undefined;
  }

  exists(userId: string): Promise<boolean> {
    return this.repo.exists(userId);
  }

  delete(userId: string): Promise<number> {
    return this.repo.delete(userId);
  }
}
