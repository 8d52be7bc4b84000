import type { Provider } from '@nestjs/common';
import { SERVICE_ENV, type SecretKeyRing } from '@bns/service-kit';
import { SESSION_STATE_KEYS, sessionStateKeyRing } from '../state-seal.js';
import { SimAuthRepository } from './sim-auth.repository.js';
import { SimAuthStore } from './sim-auth.store.js';
import type { SessionsEnv } from '../../config/env.js';
import { WA_ENGINE, type WaEngine } from './engine.types.js';
import { SimOutboxRepository } from './sim-outbox.repository.js';
import { SimulatedEngine } from './simulated.engine.js';
import { WebjsAuthRepository } from './webjs-auth.repository.js';
import { WebjsEngine } from './webjs.engine.js';

export function createEngine(
  env: SessionsEnv,
  auth: WebjsAuthRepository,
  simOutbox: SimOutboxRepository,
  simAuth: SimAuthRepository,
  ring: SecretKeyRing,
): WaEngine {
  if (env.WA_ENGINE === 'webjs') {
    return new WebjsEngine(auth, ring, {
      chromiumPath: env.CHROMIUM_PATH,
      dataPath: env.WEBJS_DATA_PATH,
      backupSyncIntervalMs: env.WEBJS_BACKUP_SYNC_MS,
      authMaxBytes: env.WEBJS_AUTH_MAX_BYTES,
      headless: env.WEBJS_HEADLESS,
      startTimeoutMs: env.WEBJS_START_TIMEOUT_MS,
      linkTimeoutMs: env.WEBJS_LINK_TIMEOUT_MS,
      authTimeoutMs: env.WEBJS_AUTH_TIMEOUT_MS,
      // The number lookup queues nothing, so it must give up before the whole send does (then it is retried).
      lookupTimeoutMs: Math.min(15_000, Math.floor(env.SEND_TIMEOUT_MS / 3)),
      serverAckTimeoutMs: env.WEBJS_SERVER_ACK_TIMEOUT_MS,
      pairingCodeRefreshMs: env.PAIRING_CODE_REFRESH_MS,
    });
  }
  return new SimulatedEngine(simOutbox, {
    qrIntervalMs: env.SIM_QR_INTERVAL_MS,
    readyDelayMs: env.SIM_READY_DELAY_MS,
    autoScanMs: env.SIM_AUTO_SCAN_MS,
    failNumbers: env.SIM_FAIL_NUMBERS,
    deliveredDelayMs: env.SIM_DELIVERED_DELAY_MS,
    readDelayMs: env.SIM_READ_DELAY_MS,
    rateLimitAfter: env.SIM_RATE_LIMIT_AFTER,
    refuseNumbers: env.SIM_REFUSE_NUMBERS,
    unreadNumbers: env.SIM_UNREAD_NUMBERS,
    refuseDelayMs: env.SIM_REFUSE_DELAY_MS,
    lidShare: env.SIM_LID_SHARE,
    failMediaNumbers: env.SIM_FAIL_MEDIA_NUMBERS,
    pairingCodeRefreshMs: env.PAIRING_CODE_REFRESH_MS,
    auth: new SimAuthStore(simAuth, ring),
  });
}

/** SESSION_STATE_KEY (and the previous keys of a rotation), checked at boot by main.ts. */
export const stateKeysProvider: Provider = {
  provide: SESSION_STATE_KEYS,
  useFactory: (env: SessionsEnv) => sessionStateKeyRing(env),
  inject: [SERVICE_ENV],
};

export const engineProvider: Provider = {
  provide: WA_ENGINE,
  useFactory: (
    env: SessionsEnv,
    auth: WebjsAuthRepository,
    simOutbox: SimOutboxRepository,
    simAuth: SimAuthRepository,
    ring: SecretKeyRing,
  ) => createEngine(env, auth, simOutbox, simAuth, ring),
  inject: [SERVICE_ENV, WebjsAuthRepository, SimOutboxRepository, SimAuthRepository, SESSION_STATE_KEYS],
};
