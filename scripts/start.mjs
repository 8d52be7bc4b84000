#!/usr/bin/env node
// `npm start`: the whole system on this machine. Installs what is missing, builds, starts a private
// Postgres (unless DATABASE_URL) and nats-server (unless NATS_URL) under .data/, every service (two
// sessions shards by default) and the gateway serving the web app; prints `Ready: <url>`. Ctrl-C stops
// everything it started.
import { createWriteStream, mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { checkNode, ensureDependencies, ensureNatsServer, fail, ROOT, run } from './lib.mjs';

checkNode();
// Ctrl-C also ends `npm`, our parent, which closes our output pipe: keep shutting down regardless.
for (const stream of [process.stdout, process.stderr]) stream.on('error', () => undefined);
const fresh = process.argv.includes('--fresh');
const skipBuild = process.argv.includes('--no-build');
const started = Date.now();

ensureDependencies();
if (!skipBuild) {
  process.stdout.write('Building…\n');
  if (run('npx', ['nx', 'run-many', '-t', 'build', '--output-style=static']) !== 0) fail('Build failed: see the output above.');
}

const testing = await import('@bns/testing');
const dataDir = process.env.BNS_DATA_DIR ?? join(ROOT, '.data');
if (fresh) rmSync(dataDir, { recursive: true, force: true });
const logDir = join(dataDir, 'logs');
mkdirSync(logDir, { recursive: true });

const gatewayPort = Number(process.env.GATEWAY_PORT ?? 8080);
if (!Number.isInteger(gatewayPort) || gatewayPort < 1 || gatewayPort > 65535) fail(`GATEWAY_PORT must be a port number, got "${process.env.GATEWAY_PORT}"`);
if (await testing.portInUse(gatewayPort)) {
  fail(`Port ${gatewayPort} (GATEWAY_PORT) is already in use: stop what is using it or set GATEWAY_PORT to another port.`);
}
const shards = Number(process.env.SESSIONS_SHARDS ?? 2);
if (!Number.isInteger(shards) || shards < 1) fail(`SESSIONS_SHARDS must be a positive integer, got "${process.env.SESSIONS_SHARDS}"`);

const logs = new Map();
const logTo = (label) => {
  if (!logs.has(label)) logs.set(label, createWriteStream(join(logDir, `${label}.log`), { flags: 'a' }));
  return logs.get(label);
};
const onLine = (label, line) => {
  logTo(label).write(`${line}\n`);
  // Warnings and errors also reach the terminal; the rest is in .data/logs.
  if (/"level":(40|50|60)/.test(line) || !line.startsWith('{')) process.stderr.write(`[${label}] ${line}\n`);
};

let postgres;
let nats;
let system;
let stopping = false;

async function shutdown(code) {
  if (stopping) return;
  stopping = true;
  process.stdout.write('\nStopping…\n');
  await system?.stop().catch(() => undefined);
  await nats?.stop().catch(() => undefined);
  await postgres?.stop().catch(() => undefined);
  for (const stream of logs.values()) stream.end();
  process.stdout.write('Stopped.\n');
  process.exit(code);
}
testing.takeOverSignals(() => void shutdown(0));

try {
  if (process.env.DATABASE_URL) {
    postgres = { url: process.env.DATABASE_URL, stop: async () => undefined };
  } else {
    postgres = await testing.startPostgres({ dataDir: join(dataDir, 'postgres'), onLog: (l) => logTo('postgres').write(`${l}\n`) });
  }
  if (process.env.NATS_URL) {
    nats = { url: process.env.NATS_URL, stop: async () => undefined };
  } else {
    ensureNatsServer(testing.natsServerBinary);
    nats = await testing.startNats({ storeDir: join(dataDir, 'nats'), onLine: (l) => logTo('nats').write(`${l}\n`) });
  }
  const clerk = Boolean(process.env.CLERK_ISSUER && (process.env.CLERK_JWKS_URL || process.env.CLERK_JWT_KEY));
  system = await testing.startSystem({
    shards,
    postgres,
    nats,
    gatewayPort,
    env: {
      LOG_LEVEL: process.env.LOG_LEVEL ?? 'info',
      AUTH_MODE: process.env.AUTH_MODE ?? (clerk ? 'clerk' : 'dev'),
      WA_ENGINE: process.env.WA_ENGINE ?? 'simulated',
    },
    onLine,
  });
  for (const s of system.services) process.stdout.write(`  ${s.label.padEnd(12)} pid ${s.process.pid}  http://127.0.0.1:${s.port}\n`);
  for (const s of system.services) {
    void s.process.waitExit().then((code) => {
      if (stopping) return;
      process.stderr.write(`${s.label} exited unexpectedly (code ${code}); last lines:\n${s.process.tail(15)}\nStopping everything.\n`);
      void shutdown(1);
    });
  }
  const url = `http://localhost:${gatewayPort}`;
  await testing.waitFor(async () => (await fetch(`${url}/readyz`)).status === 200, 60_000, 200, 'the gateway to be ready');
  process.stdout.write(`Logs: ${logDir}\nReady: ${url}  (${((Date.now() - started) / 1000).toFixed(1)} s)\n`);
} catch (err) {
  process.stderr.write(`Could not start: ${err.message}\n`);
  await shutdown(1);
}
