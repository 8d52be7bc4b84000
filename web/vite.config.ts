import react from '@vitejs/plugin-react';
import { defineConfig } from 'vitest/config';

const gateway = process.env.GATEWAY_URL ?? 'http://localhost:8080';

export default defineConfig({
  plugins: [react()],
  server: {
    proxy: {
      '^/(api|auth|dev|start-bulk-messages|job-status|job-logs|cancel-job|healthz|readyz)': gateway,
      '/socket.io': { target: gateway, ws: true },
    },
  },
  build: { outDir: 'dist', sourcemap: true },
  test: { environment: 'jsdom', include: ['src/**/*.test.{ts,tsx}'] },
});
