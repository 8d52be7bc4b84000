import type { Provider } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { SERVICE_ENV } from '@bns/service-kit';
import type { SessionsEnv } from '../../config/env.js';
import { WA_ENGINE, type WaEngine } from './engine.types.js';
import { SimulatedEngine } from './simulated.engine.js';
import { WebjsEngine } from './webjs.engine.js';

export function createEngine(env: SessionsEnv, db: DataSource): WaEngine {
  if (env.WA_ENGINE === 'webjs') {
    return new WebjsEngine(db, {
      chromiumPath: env.CHROMIUM_PATH,
      dataPath: env.WEBJS_DATA_PATH,
      backupSyncIntervalMs: env.WEBJS_BACKUP_SYNC_MS,
      authMaxBytes: env.WEBJS_AUTH_MAX_BYTES,
      headless: env.WEBJS_HEADLESS,
    });
  }
  return new SimulatedEngine(db, {
    qrIntervalMs: env.SIM_QR_INTERVAL_MS,
    readyDelayMs: env.SIM_READY_DELAY_MS,
    autoScanMs: env.SIM_AUTO_SCAN_MS,
    failNumbers: env.SIM_FAIL_NUMBERS,
    deliveredDelayMs: env.SIM_DELIVERED_DELAY_MS,
    readDelayMs: env.SIM_READ_DELAY_MS,
  });
}

export const engineProvider: Provider = {
  provide: WA_ENGINE,
  useFactory: (env: SessionsEnv, db: DataSource) => createEngine(env, db),
  inject: [SERVICE_ENV, DataSource],
};
