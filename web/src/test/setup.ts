import { cleanup, configure } from '@testing-library/react';
import { afterEach } from 'vitest';
import { resetWebConfig } from '../features/config/publicConfig.js';
import { resetSimulatorProbe } from '../features/connection/SimulatorControls.js';
import { clearToasts } from '../features/toasts/toasts.js';

// Two shared cores: give async queries room when the whole suite runs at once.
configure({ asyncUtilTimeout: 5000 });

afterEach(() => {
  cleanup();
  clearToasts();
  sessionStorage.clear();
  localStorage.clear();
  resetWebConfig();
  resetSimulatorProbe();
});
