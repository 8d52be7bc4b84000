import { cleanup, configure } from '@testing-library/react';
import { afterEach } from 'vitest';
import { resetWebConfig } from '../features/config/publicConfig.js';
import { resetSimulatorProbe } from '../features/connection/SimulatorControls.js';
import { clearToasts } from '../features/toasts/toasts.js';

// Two shared cores: give async queries room when the whole suite runs at once (beside the services'
// tests, the suite runs about 2.3× slower than alone); under the test time-out (vite.config.ts).
configure({ asyncUtilTimeout: 10_000 });

afterEach(() => {
  cleanup();
  clearToasts();
  sessionStorage.clear();
  localStorage.clear();
  resetWebConfig();
  resetSimulatorProbe();
});
