// What an e2e spec needs around its journey: the whole system started by the launcher on a free port with
// private Postgres and NATS (simulated WhatsApp, dev sign-in), headless Chromium, steps that record their
// outcome, and a dev sign-in. A spec run on its own uses these; `run.mjs` calls specs with its own.
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { ROOT, run } from '../lib.mjs';

export const OUT = join(ROOT, 'test-output', 'e2e');
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const STARTUP_TIMEOUT_MS = Number(process.env.E2E_STARTUP_TIMEOUT_MS ?? 15 * 60_000);

/** How many times the launcher is started when the gateway's port was taken between choosing and binding it. */
const PORT_RACE_ATTEMPTS = 3;
/** The launcher's last lines, kept in an error that says why it stopped. */
const LAUNCHER_TAIL_LINES = 60;

/**
 * Builds (unless E2E_NO_BUILD), starts the system on a free port with a private Postgres and NATS;
 * resolves with `{url, stop, log()}`. `env` adds to or overrides the launcher's environment. A port
 * another process took before the gateway bound it (two systems started side by side) is chosen again;
 * any other early exit rejects with the launcher's last lines.
 */
export async function startSystem(env = {}) {
  if (!process.env.E2E_NO_BUILD && run('npx', ['nx', 'run-many', '-t', 'build', '--output-style=static']) !== 0)
    throw new Error('the build failed');
  const testing = await import('@bns/testing');
  const postgres = await testing.startPostgres();
  const nats = await testing.startNats();
  // Its own data folder (keys, logs): two systems started side by side share nothing.
  const dataDir = mkdtempSync(join(tmpdir(), 'bns-e2e-'));
  const stopInfrastructure = async () => {
    await nats.stop().catch(() => undefined);
    await postgres.stop().catch(() => undefined);
    rmSync(dataDir, { recursive: true, force: true });
  };
  for (let attempt = 1; ; attempt++) {
    const started = await startLauncher({
      ...process.env,
      DATABASE_URL: postgres.url,
      NATS_URL: nats.url,
      BNS_DATA_DIR: dataDir,
      GATEWAY_PORT: String(await testing.freePort()),
      WA_ENGINE: 'simulated',
      AUTH_MODE: 'dev',
      NX_DAEMON: 'false',
      NX_TUI: 'false',
      ...env,
    }).catch((err) => err);
    if (!(started instanceof Error)) {
      const stop = async () => {
        await started.stop();
        await stopInfrastructure();
      };
      return { url: started.url, stop, log: started.log };
    }
    if (attempt < PORT_RACE_ATTEMPTS && started.portTaken) continue;
    await stopInfrastructure();
    throw started;
  }
}

/** One launcher, until it prints Ready: `{url, stop, log()}`, or an Error (`portTaken` when its port was taken). */
function startLauncher(env) {
  let log = '';
  const launcher = spawn(process.execPath, ['scripts/start.mjs', '--no-build'], {
    cwd: ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const stop = async () => {
    if (launcher.exitCode !== null || launcher.signalCode !== null) return;
    const exited = new Promise((resolve) => launcher.once('exit', resolve));
    launcher.kill('SIGINT');
    const timer = setTimeout(() => launcher.kill('SIGKILL'), 30_000);
    await exited;
    clearTimeout(timer);
  };
  const failure = (message) => {
    const err = new Error(
      `${message}; its last lines:\n${log.trimEnd().split('\n').slice(-LAUNCHER_TAIL_LINES).join('\n')}`,
    );
    err.portTaken = /EADDRINUSE|already in use/i.test(log);
    return err;
  };
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => reject(failure(`the launcher did not print Ready within ${STARTUP_TIMEOUT_MS / 1000} s`)),
      STARTUP_TIMEOUT_MS,
    );
    const onData = (chunk) => {
      log = (log + chunk.toString()).slice(-20_000);
      const m = /Ready: (\S+)/.exec(log);
      if (m) {
        clearTimeout(timer);
        resolve({ url: m[1], stop, log: () => log });
      }
    };
    launcher.stdout.on('data', onData);
    launcher.stderr.on('data', onData);
    launcher.on('exit', (code, signal) => {
      clearTimeout(timer);
      reject(failure(`the launcher exited (${signal ?? `code ${code}`}) before it was ready`));
    });
  }).catch(async (err) => {
    await stop();
    throw err;
  });
}

export function launchBrowser() {
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--no-first-run',
      '--disable-dev-shm-usage',
    ],
  });
}

export function check(condition, message) {
  if (!condition) throw new Error(message);
}

/** Steps of one spec: each prints ✓/✗ with its time; a failure takes a screenshot and stops the spec. */
export function stepper(name) {
  const results = [];
  mkdirSync(OUT, { recursive: true });
  const step = async (page, title, fn) => {
    const started = Date.now();
    try {
      await fn();
      results.push({ name: title, ok: true, ms: Date.now() - started });
      process.stdout.write(`  ✓ ${title} (${Date.now() - started} ms)\n`);
    } catch (err) {
      results.push({ name: title, ok: false, ms: Date.now() - started, error: err.message });
      process.stdout.write(`  ✗ ${title}: ${err.message}\n`);
      await page
        ?.screenshot({
          path: join(OUT, `failure-${name}-${title.replace(/\W+/g, '-').slice(0, 80)}.png`),
          fullPage: true,
        })
        .catch(() => undefined);
      throw err;
    }
  };
  const write = () => {
    const dir = join(ROOT, 'test-output', 'results');
    mkdirSync(dir, { recursive: true });
    const passed = results.filter((r) => r.ok).length;
    const failed = results.filter((r) => !r.ok).length;
    writeFileSync(
      join(dir, `e2e-${name}.json`),
      JSON.stringify({
        name: `e2e-${name}`,
        passed,
        failed,
        skipped: 0,
        failures: results
          .filter((r) => !r.ok)
          .map((r) => `e2e-${name} › ${r.name}: ${String(r.error).split('\n')[0].slice(0, 300)}`),
      }),
    );
    return { passed, failed };
  };
  return { step, results, write };
}

/** Signs a new user in through the dev sign-in dialog of the landing page; resolves with the token. */
export async function signIn(page, url, email, firstName = 'Ann') {
  await page.goto(url);
  await page.getByRole('link', { name: 'Start Messaging' }).click();
  const dialog = page.getByRole('dialog', { name: 'Sign in' });
  await dialog.getByLabel('E-mail').fill(email);
  await dialog.getByLabel('First name (optional)').fill(firstName);
  await dialog.getByRole('button', { name: 'Sign In' }).click();
  await page.getByText('Welcome,').waitFor();
  return page.evaluate(() => JSON.parse(localStorage.getItem('bns.devSession') ?? '{}').token ?? '');
}

/** Links WhatsApp with the simulated engine's scan. */
export async function linkWhatsApp(page) {
  await page.getByRole('button', { name: 'Connect WhatsApp' }).click({ timeout: 40_000 });
  await page.getByRole('button', { name: 'Simulate scan' }).click({ timeout: 30_000 });
  await page.locator('.connected-banner').waitFor({ timeout: 15_000 });
}

export async function api(url, token, method, path, body) {
  const res = await fetch(`${url}${path}`, {
    method,
    headers: { Authorization: `Bearer ${token}`, ...(body ? { 'Content-Type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  const json = await res.json().catch(() => ({}));
  return { status: res.status, body: json };
}
