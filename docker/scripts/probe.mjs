#!/usr/bin/env node
/**
 * Health probe for images without curl/wget (Docker HEALTHCHECK, Kubernetes exec probes).
 *
 *   node /app/docker/probe.mjs /healthz              exit 0 when GET /healthz answers 2xx
 *   node /app/docker/probe.mjs /readyz --only nats   exit 0 when the named checks of /readyz are ok,
 *                                                     whatever the other checks say
 *
 * --only exists for the gateway: its /readyz is 503 as soon as any service or shard is down, and a
 * readiness probe on it would take every gateway replica out of the load balancer at once. Gated on
 * its own NATS connection only, a gateway keeps serving what still works and answers 503s itself.
 */
import { request } from 'node:http';

const [path = '/healthz', ...rest] = process.argv.slice(2);
const onlyAt = rest.indexOf('--only');
const only = onlyAt >= 0 ? (rest[onlyAt + 1] ?? '').split(',').filter(Boolean) : [];
const port = Number(process.env.PORT ?? 8080);
const timeoutMs = Number(process.env.PROBE_TIMEOUT_MS ?? 4000);

function fail(why) {
  process.stderr.write(`probe ${path}: ${why}\n`);
  process.exit(1);
}

const req = request(
  { host: '127.0.0.1', port, path, timeout: timeoutMs, headers: { accept: 'application/json' } },
  (res) => {
    let body = '';
    res.setEncoding('utf8');
    res.on('data', (chunk) => (body += chunk));
    res.on('end', () => {
      if (only.length === 0) {
        if (res.statusCode >= 200 && res.statusCode < 300) process.exit(0);
        fail(`HTTP ${res.statusCode}`);
      }
      let checks;
      try {
        checks = JSON.parse(body).checks ?? [];
      } catch {
        fail(`HTTP ${res.statusCode}, body is not JSON`);
      }
      for (const name of only) {
        const check = checks.find((c) => c.name === name);
        if (!check) fail(`no check named "${name}"`);
        if (!check.ok) fail(`${name}: ${check.error ?? 'not ok'}`);
      }
      process.exit(0);
    });
  },
);
req.on('timeout', () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
req.on('error', (err) => fail(err.message));
req.end();
