import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SERVICES } from '@bns/contracts';
import { startNats, startPostgres, type Nats, type Postgres } from './infra.js';
import { freePort, ManagedProcess, PORT_RACE_ATTEMPTS, REPO_ROOT, saysPortTaken } from './process.js';

export type ServiceName = (typeof SERVICES)[number] | 'gateway';

export interface ServiceHandle {
  name: ServiceName;
  label: string;
  port: number;
  url: string;
  env: Record<string, string>;
  process: ManagedProcess;
  stop(): Promise<void>;
  kill9(): Promise<void>;
}

export interface StartServiceOptions {
  env: Record<string, string>;
  port?: number;
  label?: string;
  onLine?: (line: string) => void;
  /** Wait for /readyz instead of /healthz (the gateway's readyz needs every service). */
  waitReady?: boolean;
  timeoutMs?: number;
}

export function serviceEntry(name: ServiceName): string {
  const entry = join(REPO_ROOT, 'services', name, 'dist', 'main.js');
  if (!existsSync(entry)) throw new Error(`${entry} is missing: build first (npm run build)`);
  return entry;
}

/**
 * Where spawned services keep V8's compiled code between starts (Node's NODE_COMPILE_CACHE): a test
 * run starts each service dozens of times, and each start then skips compiling its modules again
 * (startSystem: 7.4–7.7 s without, 4.9–6.3 s with, on two cores). Keyed by file contents, so a
 * rebuild never runs stale code.
 */
export const COMPILE_CACHE_DIR = join(tmpdir(), 'bns-node-compile-cache');

/**
 * Spawns a built service as its own process and waits until it answers /healthz. A process that exits
 * fails the start at once (not after the timeout). A port `freePort` chose can be taken by another
 * process (a parallel test's service, or an outgoing connection's local port) before the service
 * binds it: then the service starts again on another one (PORT_RACE_ATTEMPTS in all).
 */
export async function startService(name: ServiceName, options: StartServiceOptions): Promise<ServiceHandle> {
  const label = options.label ?? name;
  for (let attempt = 1; ; attempt++) {
    const port = options.port ?? (await freePort());
    const env = { LOG_LEVEL: 'warn', NODE_COMPILE_CACHE: process.env.NODE_COMPILE_CACHE ?? COMPILE_CACHE_DIR, ...options.env, PORT: String(port) };
    const proc = ManagedProcess.spawn(label, process.execPath, ['--enable-source-maps', serviceEntry(name)], {
      env: { ...process.env, ...env },
      cwd: REPO_ROOT,
      onLine: options.onLine,
    });
    const url = `http://127.0.0.1:${port}`;
    const up = await untilUp(proc, `${url}/${options.waitReady ? 'readyz' : 'healthz'}`, options.timeoutMs ?? 30_000);
    if (up === 'up') return handleOf(name, label, port, url, env, proc);
    proc.child.kill('SIGKILL');
    const output = await proc.finalTail(30);
    if (up === 'exited' && options.port === undefined && attempt < PORT_RACE_ATTEMPTS && saysPortTaken(output)) continue;
    const why = up === 'exited' ? `${label} exited (${proc.exitCode})` : `timed out after ${options.timeoutMs ?? 30_000} ms waiting for ${label} to come up`;
    throw new Error(`${why}\n--- ${label} output ---\n${output}`);
  }
}

/** Polls `healthUrl` until it answers 200 ('up'), the process ends ('exited') or the time is out. */
async function untilUp(proc: ManagedProcess, healthUrl: string, timeoutMs: number): Promise<'up' | 'exited' | 'timeout'> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (!proc.running) return 'exited';
    try {
      // Bounded: the port may belong to something that accepts and never answers (a race lost to it).
      if ((await fetch(healthUrl, { signal: AbortSignal.timeout(2000) })).status === 200) return 'up';
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) return 'timeout';
    await new Promise((r) => setTimeout(r, 100));
  }
}

function handleOf(name: ServiceName, label: string, port: number, url: string, env: Record<string, string>, proc: ManagedProcess): ServiceHandle {
  return {
    name,
    label,
    port,
    url,
    env,
    process: proc,
    stop: () => proc.stop(),
    kill9: () => proc.kill9(),
  };
}

export interface SystemOptions {
  shards?: number;
  /** Extra env for every service. */
  env?: Record<string, string>;
  /** Extra env per service name; `sessions-<k>` for one sessions shard only (after `sessions`'s). */
  serviceEnv?: Partial<Record<ServiceName | `sessions-${number}`, Record<string, string>>>;
  /** Start only these services (the gateway is always started last). */
  services?: readonly ServiceName[];
  postgres?: Postgres;
  nats?: Nats;
  gatewayPort?: number;
  onLine?: (label: string, line: string) => void;
}

export interface System {
  postgres: Postgres;
  nats: Nats;
  gateway: ServiceHandle;
  services: ServiceHandle[];
  /** Common env for (re)starting a service against this system. */
  baseEnv: Record<string, string>;
  start(name: ServiceName, extraEnv?: Record<string, string>, label?: string): Promise<ServiceHandle>;
  stop(): Promise<void>;
}

/**
 * The whole system on free ports: a private Postgres, a private nats-server, every service (each
 * sessions shard its own process) and the gateway, which is ready only when all of them answer.
 */
export async function startSystem(options: SystemOptions = {}): Promise<System> {
  const shards = options.shards ?? 2;
  const postgres = options.postgres ?? (await startPostgres());
  const nats = options.nats ?? (await startNats());
  const baseEnv: Record<string, string> = {
    NATS_URL: nats.url,
    DATABASE_URL: postgres.url,
    SESSIONS_SHARDS: String(shards),
    AUTH_MODE: 'dev',
    WA_ENGINE: 'simulated',
    ...options.env,
  };
  const wanted = options.services ?? ['templates', 'jobs', 'dashboard', 'sessions', 'integrations'];
  const handles: ServiceHandle[] = [];
  const start = (name: ServiceName, extraEnv: Record<string, string> = {}, label?: string) =>
    startService(name, {
      env: { ...baseEnv, ...options.serviceEnv?.[name], ...extraEnv },
      label,
      onLine: options.onLine && ((line) => options.onLine!(label ?? name, line)),
    });
  const stopAll = async () => {
    await Promise.all(handles.map((h) => h.stop().catch(() => undefined)));
    if (!options.nats) await nats.stop();
    if (!options.postgres) await postgres.stop();
  };
  try {
    const jobs: Promise<ServiceHandle>[] = [];
    for (const name of wanted) {
      if (name === 'gateway') continue;
      if (name === 'sessions') {
        for (let k = 0; k < shards; k++) jobs.push(start('sessions', { ...options.serviceEnv?.[`sessions-${k}`], SHARD_INDEX: String(k) }, `sessions-${k}`));
      } else {
        jobs.push(start(name));
      }
    }
    // Migrations of different schemas do not contend, so services start side by side, and the gateway
    // with them (it owns no schema and asks the others only when a request comes).
    const gatewayStarted = startService('gateway', {
      env: { ...baseEnv, ...options.serviceEnv?.gateway },
      port: options.gatewayPort,
      onLine: options.onLine && ((line) => options.onLine!('gateway', line)),
    });
    const started = await Promise.allSettled([...jobs, gatewayStarted]);
    for (const s of started) if (s.status === 'fulfilled') handles.push(s.value);
    const failed = started.find((s) => s.status === 'rejected');
    if (failed) throw failed.reason;
    const gateway = await gatewayStarted;
    return { postgres, nats, gateway, services: handles, baseEnv, start, stop: stopAll };
  } catch (err) {
    await stopAll();
    throw err;
  }
}
