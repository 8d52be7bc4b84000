import { mkdirSync, writeFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import react from '@vitejs/plugin-react';
import type { Reporter } from 'vitest/reporters';
import { defineConfig } from 'vitest/config';

const gateway = process.env.GATEWAY_URL ?? 'http://localhost:8080';

/** Totals for the closing summary of `npm test` (test-output/results/<name>.json, like the Jest projects). */
const resultsReporter: Reporter = {
  onTestRunEnd(modules) {
    const totals = { passed: 0, failed: 0, skipped: 0, failures: [] as string[] };
    for (const m of modules) {
      for (const t of m.children.allTests()) {
        const state = t.result().state;
        if (state === 'passed') totals.passed++;
        else if (state === 'failed') {
          totals.failed++;
          totals.failures.push(
            `web/${m.relativeModuleId} › ${t.fullName}: ${(t.result().errors?.[0]?.message ?? '').split('\n')[0].slice(0, 300)}`,
          );
        } else totals.skipped++;
      }
      if (m.state() === 'failed' && [...m.children.allTests()].length === 0) {
        totals.failed++;
        totals.failures.push(
          `web/${m.relativeModuleId}: ${(m.errors()[0]?.message ?? '').split('\n')[0].slice(0, 300)}`,
        );
      }
    }
    const dir = fileURLToPath(new URL('../test-output/results', import.meta.url));
    mkdirSync(dir, { recursive: true });
    writeFileSync(`${dir}/vitest-web.json`, JSON.stringify({ name: 'vitest-web', ...totals }));
  },
};

export default defineConfig({
  plugins: [react()],
  server: {
    proxy: {
      '^/(api|auth|dev|start-bulk-messages|job-status|job-logs|cancel-job|healthz|readyz)': gateway,
      '/socket.io': { target: gateway, ws: true },
    },
  },
  build: { outDir: 'dist', sourcemap: true, manifest: true },
  test: {
    environment: 'jsdom',
    include: ['src/**/*.test.{ts,tsx}'],
    setupFiles: ['src/test/setup.ts'],
    reporters: ['default', resultsReporter],
    // Vitest's default is one worker per core but one: on two cores, one file at a time (78 s here
    // against 47 s with two). Most of a file's time is setting up jsdom, not waiting on timers.
    maxWorkers: Math.max(2, availableParallelism() - 1),
    // In `npm test` this runs in a lane beside the services' integration tests, on two shared cores,
    // where a test that renders a whole tab took over Vitest's default 5 s (126 s for the suite
    // against 54 s alone).
    testTimeout: 30_000,
  },
});
