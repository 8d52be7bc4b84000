#!/usr/bin/env node
// `npm start`: the whole system on this machine. Installs what is missing, builds, starts a private
// Postgres (unless DATABASE_URL) and nats-server (unless NATS_URL) under .data/, every service (two
// sessions shards by default) and the gateway serving the web app; prints `Ready: <url>`. Ctrl-C stops
// everything it started. Everything listens on 127.0.0.1 (the gateway: GATEWAY_BIND_ADDRESS), and each
// service's metrics are on a port of their own, printed beside it.
import { createWriteStream, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { ensureDependencies, ensureNatsServer, fail, keptSecret, launcherEnv, ROOT, run, useNode24 } from './lib.mjs';

await useNode24();
// Ctrl-C also ends `npm`, our parent, which closes our output pipe: keep shutting down regardless.
for (const stream of [process.stdout, process.stderr]) stream.on('error', () => undefined);
const fresh = process.argv.includes('--fresh');
const skipBuild = process.argv.includes('--no-build');
const started = Date.now();
const settings = launcherEnv();

ensureDependencies();
if (!skipBuild) {
  process.stdout.write('Building…\n');
  if (run('npx', ['nx', 'run-many', '-t', 'build', '--output-style=static']) !== 0)
    fail('Build failed: see the output above.');
}

const testing = await import('@bns/testing');
// Absolute: nats-server and Postgres show it in their command lines, which must work from anywhere.
const dataDir = resolve(ROOT, settings.BNS_DATA_DIR);
if (fresh) rmSync(dataDir, { recursive: true, force: true });
const logDir = join(dataDir, 'logs');
mkdirSync(logDir, { recursive: true });

const gatewayPort = settings.GATEWAY_PORT;
if (await testing.portInUse(gatewayPort)) {
  fail(
    `Port ${gatewayPort} (GATEWAY_PORT) is already in use: stop what is using it or set GATEWAY_PORT to another port.`,
  );
}
const shards = Number(process.env.SESSIONS_SHARDS ?? 2);
if (!Number.isInteger(shards) || shards < 1)
  fail(`SESSIONS_SHARDS must be a positive integer, got "${process.env.SESSIONS_SHARDS}"`);
/**
 * How a start is waited for (StartProgress in libs/testing): a service that is moving (output, CPU,
 * its port answering) for up to START_TIMEOUT_S; one that exits, or stays silent for
 * START_SILENCE_MS (30 s), fails at once with its last lines. A busy machine (load 12 on two cores)
 * took a service past a fixed 30 s in 3 starts of 5.
 */
const startWait = { timeoutMs: settings.START_TIMEOUT_S * 1000, silenceMs: testing.START_SILENCE_MS };
/** A process's line in the table: its pid, its HTTP address and its metrics address. */
const tableLine = (handle, note = '') =>
  `  ${handle.label.padEnd(12)} pid ${handle.process.pid}  ${note}${handle.url}  metrics ${handle.metricsUrl}\n`;

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

// Supervision, as a Kubernetes Deployment would do it: a child that dies is started again after a
// back-off that doubles with each crash in a row (1 s … 30 s) and resets once it has run for a while;
// only a child that keeps dying fast (GIVE_UP_AFTER crashes, each within FAST_CRASH_MS of its start)
// stops the whole system.
const BACKOFF_FIRST_MS = 1000;
const BACKOFF_MAX_MS = 30_000;
const FAST_CRASH_MS = 30_000;
const GIVE_UP_AFTER = 5;

function supervise(index, crashes = 0) {
  const handle = system.services[index];
  const startedAt = Date.now();
  void handle.process.waitExit().then((code) => {
    const inARow = Date.now() - startedAt < FAST_CRASH_MS ? crashes + 1 : 1;
    const signal = handle.process.exitSignal;
    return restart(
      index,
      code === null && signal ? `killed by ${signal}` : `code ${code}`,
      inARow,
      handle.process.tail(15),
    );
  });
}

async function restart(index, why, inARow, tail) {
  if (stopping) return;
  const handle = system.services[index];
  if (inARow >= GIVE_UP_AFTER) {
    process.stderr.write(
      `${handle.label} crashed ${inARow} times in a row, each within ${FAST_CRASH_MS / 1000} s of its start (${why}); last lines:\n${tail}\nGiving up: stopping everything.\n`,
    );
    return void shutdown(1);
  }
  const delay = Math.min(BACKOFF_MAX_MS, BACKOFF_FIRST_MS * 2 ** (inARow - 1));
  process.stderr.write(
    `${handle.label} exited unexpectedly (${why}); restarting it in ${delay / 1000} s (crash ${inARow} in a row). Last lines:\n${tail}\n`,
  );
  await new Promise((r) => setTimeout(r, delay));
  if (stopping) return;
  let next;
  const starting = testing.startService(handle.name, {
    env: handle.env,
    port: handle.port,
    metricsPort: handle.metricsPort,
    label: handle.label,
    onLine: (line) => onLine(handle.label, line),
    ...startWait,
  });
  restarting.add(starting);
  try {
    next = await starting;
  } catch (err) {
    // It did not come up: one more fast crash.
    return restart(index, 'it did not come up', inARow + 1, err.message);
  } finally {
    restarting.delete(starting);
  }
  // `system.stop()` stops what is in system.services: the new process takes the dead one's place.
  system.services[index] = next;
  if (stopping) return void next.stop();
  process.stdout.write(tableLine(next, 'restarted  '));
  supervise(index, inARow);
}

/** Restarts under way: a Ctrl-C during one waits for it and stops what it started. */
const restarting = new Set();
let postgres;
let nats;
let system;
let stopping = false;

async function shutdown(code) {
  if (stopping) return;
  stopping = true;
  process.stdout.write('\nStopping…\n');
  await system?.stop().catch(() => undefined);
  await Promise.all(
    [...restarting].map((p) =>
      p.then(
        (h) => h.stop(),
        () => undefined,
      ),
    ),
  );
  await nats?.stop().catch(() => undefined);
  await postgres?.stop().catch(() => undefined);
  for (const stream of logs.values()) stream.end();
  process.stdout.write('Stopped.\n');
  process.exit(code);
}
testing.takeOverSignals(() => void shutdown(0));

/** A key kept with the data (made once): a restart must open what the last run sealed. */
const keptKey = (name) => keptSecret(join(dataDir, name));

try {
  if (process.env.DATABASE_URL) {
    postgres = { url: process.env.DATABASE_URL, stop: async () => undefined };
  } else {
    postgres = await testing.startPostgres({
      dataDir: join(dataDir, 'postgres'),
      onLog: (l) => logTo('postgres').write(`${l}\n`),
    });
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
    startTimeoutMs: startWait.timeoutMs,
    silenceMs: startWait.silenceMs,
    // Every process listens on 127.0.0.1 (startService's default); the gateway where it is asked to.
    serviceEnv: {
      gateway: { BIND_ADDRESS: settings.GATEWAY_BIND_ADDRESS },
      // Seals the webhook signing secrets: kept with the data, or a restart could not open them.
      integrations: {
        INTEGRATIONS_SECRET_KEY: process.env.INTEGRATIONS_SECRET_KEY || keptKey('integrations-secret-key'),
      },
      // Seals every stored WhatsApp login: kept with the data, or a restart could not restore the links.
      sessions: { SESSION_STATE_KEY: process.env.SESSION_STATE_KEY || keptKey('session-state-key') },
    },
    env: {
      LOG_LEVEL: process.env.LOG_LEVEL ?? 'info',
      AUTH_MODE: process.env.AUTH_MODE ?? (clerk ? 'clerk' : 'dev'),
      WA_ENGINE: process.env.WA_ENGINE ?? 'simulated',
      // The dev issuer's key lives with the data, so a gateway restart keeps everyone signed in.
      DEV_ISSUER_KEY_FILE: process.env.DEV_ISSUER_KEY_FILE ?? join(dataDir, 'dev-issuer-key.json'),
    },
    onLine,
  });
  for (const s of system.services) process.stdout.write(tableLine(s));
  system.services.forEach((_, i) => supervise(i));
  const url = `http://localhost:${gatewayPort}`;
  // Every process answers by now; the gateway's /readyz also needs each to answer its NATS ping. A
  // process that dies meanwhile is restarted by its supervisor, so this waits on the whole limit.
  let lastReadyz = '';
  await testing
    .waitFor(
      async () => {
        const res = await fetch(`${system.gateway.url}/readyz`, { signal: AbortSignal.timeout(5000) });
        lastReadyz = `${res.status} ${await res.text()}`;
        return res.status === 200;
      },
      startWait.timeoutMs,
      200,
      'the gateway to be ready',
    )
    .catch((err) => {
      throw new Error(
        `${err.message}${lastReadyz ? `\nIts last /readyz: ${lastReadyz.slice(0, 2000)}` : ''}\n(START_TIMEOUT_S=${settings.START_TIMEOUT_S} s: raise it on a very busy machine)`,
      );
    });
  process.stdout.write(`Logs: ${logDir}\nReady: ${url}  (${((Date.now() - started) / 1000).toFixed(1)} s)\n`);
} catch (err) {
  process.stderr.write(`Could not start: ${err.message}\n`);
  await shutdown(1);
}
