import { Inject, Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import { SecretBox, SecretKeyMismatchError, SecretKeyRing, SERVICE_ENV } from '@bns/service-kit';
import type { SessionsEnv } from '../config/env.js';
import { simulatedCreds } from './engines/sim-auth.store.js';
import { SimAuthRepository } from './engines/sim-auth.repository.js';
import { WebjsAuthRepository } from './engines/webjs-auth.repository.js';
import { LinksRepository } from './links.repository.js';
import { UserSessions } from './user-sessions.js';

/** The keys that seal every engine's stored login: SESSION_STATE_KEY, then SESSION_STATE_KEY_PREVIOUS. */
export const SESSION_STATE_KEYS = Symbol('SESSION_STATE_KEYS');

export const SESSION_STATE_KEY_NAME = 'SESSION_STATE_KEY';

export function sessionStateKeyRing(env: Pick<SessionsEnv, 'SESSION_STATE_KEY' | 'SESSION_STATE_KEY_PREVIOUS'>) {
  return new SecretKeyRing(
    new SecretBox(env.SESSION_STATE_KEY, SESSION_STATE_KEY_NAME),
    env.SESSION_STATE_KEY_PREVIOUS.map((k) => new SecretBox(k, 'SESSION_STATE_KEY_PREVIOUS')),
  );
}

/** Why the shard stops at start when stored logins do not open: nothing is unlinked meanwhile. */
export function wrongSessionStateKey(count: number): string {
  return `SESSION_STATE_KEY does not open ${count} stored WhatsApp login(s) of this shard: start with the key they were sealed with (or name it in SESSION_STATE_KEY_PREVIOUS to rotate to a new one). Nothing was unlinked.`;
}

/** What the start-up pass did (the log line, and the tests). */
export interface SealPass {
  sealedLegacy: number;
  rotated: number;
  createdSimulated: number;
  unopenable: number;
}

/**
 * Every engine's login is sealed at rest under SESSION_STATE_KEY (AES-256-GCM, the shared SecretBox).
 * At start, before any link is restored, this shard walks the logins of the users it owns: a plain one
 * (written before sealing existed) is sealed, one sealed under a previous key is sealed again under the
 * key in force, and a simulated link that has no login yet gets one, so nobody is unlinked by the
 * change. A login that no configured key opens stops the shard with a line naming SESSION_STATE_KEY
 * instead of being dropped as if the phone had unlinked.
 */
@Injectable()
export class SessionStateSeal implements OnModuleInit {
  private readonly logger = new Logger('SessionStateSeal');

  constructor(
    @Inject(SESSION_STATE_KEYS) private readonly ring: SecretKeyRing,
    @Inject(SERVICE_ENV) private readonly env: SessionsEnv,
    private readonly webjsAuth: WebjsAuthRepository,
    private readonly simAuth: SimAuthRepository,
    private readonly links: LinksRepository,
    private readonly sessions: UserSessions,
  ) {}

  async onModuleInit(): Promise<void> {
    const pass = await this.sealAll();
    if (pass.unopenable > 0) {
      this.logger.error({ unopenable: pass.unopenable }, wrongSessionStateKey(pass.unopenable));
      throw new Error(wrongSessionStateKey(pass.unopenable));
    }
    if (pass.sealedLegacy + pass.rotated + pass.createdSimulated > 0)
      this.logger.log(pass, 'sealed stored WhatsApp logins under SESSION_STATE_KEY');
  }

  async sealAll(): Promise<SealPass> {
    const pass: SealPass = { sealedLegacy: 0, rotated: 0, createdSimulated: 0, unopenable: 0 };
    // One row at a time: a webjs profile may be tens of megabytes.
    for (const { session, userId } of await this.webjsAuth.sessions()) {
      if (!this.sessions.owns(userId)) continue;
      const data = await this.webjsAuth.load(session);
      if (!data) continue;
      const sealed = this.reseal(data, pass);
      if (sealed) await this.webjsAuth.replace(session, data, sealed);
    }
    for (const userId of await this.simAuth.userIds()) {
      if (!this.sessions.owns(userId)) continue;
      const data = await this.simAuth.load(userId);
      if (!data) continue;
      const sealed = this.reseal(data, pass);
      if (sealed) await this.simAuth.replace(userId, data, sealed);
    }
    if (this.env.WA_ENGINE === 'simulated') {
      // Simulated links made before the engine kept a login: their number becomes one.
      for (const link of await this.links.all('simulated')) {
        if (!this.sessions.owns(link.userId) || !link.phoneNumber) continue;
        if (await this.simAuth.exists(link.userId)) continue;
        await this.simAuth.save(link.userId, this.ring.sealBytes(simulatedCreds(link.phoneNumber)));
        pass.createdSimulated += 1;
      }
    }
    return pass;
  }

  /** The row sealed under the key in force, or undefined when it already is (or opens with no key). */
  private reseal(data: Buffer, pass: SealPass): Buffer | undefined {
    if (!SecretBox.isSealedBytes(data)) {
      pass.sealedLegacy += 1;
      return this.ring.sealBytes(data);
    }
    try {
      const { plain, rotated } = this.ring.openBytes(data);
      if (!rotated) return undefined;
      pass.rotated += 1;
      return this.ring.sealBytes(plain);
    } catch (err) {
      if (!(err instanceof SecretKeyMismatchError)) throw err;
      pass.unopenable += 1;
      return undefined;
    }
  }
}
