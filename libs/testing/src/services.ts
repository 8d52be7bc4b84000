import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SERVICES } from '@bns/contracts';
import { startNats, startPostgres, type Nats, type Postgres } from './infra.js';
import {
  cpuMsOf,
  freePort,
  ManagedProcess,
  PORT_RACE_ATTEMPTS,
  REPO_ROOT,
  saysPortTaken,
  sleep,
  START_SILENCE_MS,
  StartProgress,
} from './process.js';

export type ServiceName = (typeof SERVICES)[number] | 'gateway';

export interface ServiceHandle {
  name: ServiceName;
  label: string;
  port: number;
  url: string;
  /** Its Prometheus endpoint's port (METRICS_PORT), apart from `port`. */
  metricsPort: number;
  /** `http://127.0.0.1:<metricsPort>`: scrape `${metricsUrl}/metrics`. */
  metricsUrl: string;
  env: Record<string, string>;
  process: ManagedProcess;
  stop(): Promise<void>;
  kill9(): Promise<void>;
}

export interface StartServiceOptions {
  env: Record<string, string>;
  /** Its HTTP port; a free one when omitted. */
  port?: number;
  /** Its metrics port, tried first (a restart keeps the one it had); a free one when omitted or taken. */
  metricsPort?: number;
  label?: string;
  onLine?: (line: string) => void;
  /** Wait for /readyz instead of /healthz (the gateway's readyz needs every service). */
  waitReady?: boolean;
  /** The longest wait for a start that is still making progress (default START_TIMEOUT_MS). */
  timeoutMs?: number;
  /**
   * The progress rule (StartProgress): a process that has made no progress this long (no output, no
   * CPU, its port not answering) fails at once, however long `timeoutMs` is. Default START_SILENCE_MS.
   */
  silenceMs?: number;
}

/**
 * The longest a start that keeps making progress is waited for (the launcher's START_TIMEOUT_S default):
 * on two cores at load 12 a service took over 30 s, and a fixed 30 s failed 3 starts of 5. A start that
 * stops making progress still fails after START_SILENCE_MS, as the fixed limit failed it before.
 */
export const START_TIMEOUT_MS = 180_000;

/** The address spawned services listen on (BIND_ADDRESS): this machine only, unless the env says otherwise. */
export const LOOPBACK = '127.0.0.1';

/** The port an EADDRINUSE in a server's output names (`address already in use 127.0.0.1:8080`). */
function takenPort(output: string): number | undefined {
  const m = /EADDRINUSE[^\n]*?:(\d+)\b/.exec(output);
  return m ? Number(m[1]) : undefined;
}

export function serviceEntry(name: ServiceName): string {
  const entry = join(REPO_ROOT, 'services', name, 'dist', 'main.js');
  if (!existsSync(entry)) throw new Error(`${entry} is missing: build first (npm run build)`);
  return entry;
}

/**
 * How a service's process starts, from its package.json (its image's CMD and ENV carry the same, which
 * deploy/test/docker.test.mjs checks): `nodeFlags`, the Node flags (the jobs service caps V8's young
 * generation, so the garbage of a 50,000-row start does not grow the process by a hundred megabytes),
 * and `nodeEnv`, settings read before any code runs (the jobs service fixes glibc's
 * MALLOC_MMAP_THRESHOLD_, so the large buffers of such a start are handed back to the system when freed
 * rather than kept in its heap).
 */
function serviceLaunch(name: ServiceName): { nodeFlags: string[]; nodeEnv: Record<string, string> } {
  const pkg = JSON.parse(readFileSync(join(REPO_ROOT, 'services', name, 'package.json'), 'utf8')) as {
    nodeFlags?: string[];
    nodeEnv?: Record<string, string>;
  };
  return { nodeFlags: pkg.nodeFlags ?? [], nodeEnv: pkg.nodeEnv ?? {} };
}

/**
 * Where spawned services keep V8's compiled code between starts (Node's NODE_COMPILE_CACHE): a test
 * run starts each service dozens of times, and each start then skips compiling its modules again
 * (startSystem: 7.4–7.7 s without, 4.9–6.3 s with, on two cores). Keyed by file contents, so a
 * rebuild never runs stale code.
 */
export const COMPILE_CACHE_DIR = join(tmpdir(), 'bns-node-compile-cache');

/**
 * Spawns a built service as its own process, listening on 127.0.0.1 (BIND_ADDRESS, unless `env` sets
 * another) with its HTTP port and a metrics port of its own, and waits until it answers /healthz: as
 * long as it makes progress (up to `timeoutMs`), so a loaded machine's slow start is not a failure. A
 * process that exits fails the start at once, and so does one that has made no progress for
 * `silenceMs`. A port `freePort` chose can be taken by another process (a parallel
 * test's service, or an outgoing connection's local port) before the service binds it: then the
 * service starts again on other ports (PORT_RACE_ATTEMPTS in all). A port the caller fixed is never
 * replaced: its EADDRINUSE fails the start.
 */
export async function startService(name: ServiceName, options: StartServiceOptions): Promise<ServiceHandle> {
  const label = options.label ?? name;
  const timeoutMs = options.timeoutMs ?? START_TIMEOUT_MS;
  const silenceMs = options.silenceMs ?? START_SILENCE_MS;
  const launch = serviceLaunch(name);
  for (let attempt = 1; ; attempt++) {
    const port = options.port ?? (await freePort());
    // The metrics port a restart asks for is a wish: when it was taken meanwhile, another will do.
    let metricsPort = attempt === 1 && options.metricsPort !== undefined ? options.metricsPort : await freePort();
    // Two calls of freePort can name the same port (the system hands a closed one out again).
    while (metricsPort === port) metricsPort = await freePort();
    const env = {
      ...launch.nodeEnv,
      LOG_LEVEL: 'warn',
      NODE_COMPILE_CACHE: process.env.NODE_COMPILE_CACHE ?? COMPILE_CACHE_DIR,
      BIND_ADDRESS: LOOPBACK,
      ...options.env,
      PORT: String(port),
      METRICS_PORT: String(metricsPort),
    };
    const proc = ManagedProcess.spawn(
      label,
      process.execPath,
      ['--enable-source-maps', ...launch.nodeFlags, serviceEntry(name)],
      {
        env: { ...process.env, ...env },
        cwd: REPO_ROOT,
        onLine: options.onLine,
      },
    );
    const url = `http://127.0.0.1:${port}`;
    const up = await waitForStart(proc, `${url}/${options.waitReady ? 'readyz' : 'healthz'}`, { timeoutMs, silenceMs });
    if (up === 'up') return handleOf(name, label, port, metricsPort, url, env, proc);
    proc.child.kill('SIGKILL');
    const output = await proc.finalTail(30);
    const lostAChosenPort = saysPortTaken(output) && (options.port === undefined || takenPort(output) !== options.port);
    if (up === 'exited' && attempt < PORT_RACE_ATTEMPTS && lostAChosenPort) continue;
    const why =
      up === 'exited'
        ? `${label} exited (${proc.exitCode})`
        : up === 'silent'
          ? `${label} made no progress for ${Math.round(silenceMs / 1000)} s (no output, almost no CPU, its port not answering): given up`
          : `timed out after ${timeoutMs} ms waiting for ${label} to come up (it was still making progress)`;
    throw new Error(`${why}\n--- ${label} output ---\n${output}`);
  }
}

/**
 * Polls `healthUrl` until it answers 200 ('up'), the process ends ('exited'), the time is out
 * ('timeout') or, with `silenceMs`, the process has made no progress for that long ('silent', see
 * StartProgress).
 */
export async function waitForStart(
  proc: ManagedProcess,
  healthUrl: string,
  { timeoutMs, silenceMs }: { timeoutMs: number; silenceMs?: number },
): Promise<'up' | 'exited' | 'timeout' | 'silent'> {
  const started = Date.now();
  const deadline = started + timeoutMs;
  const progress = silenceMs === undefined ? undefined : new StartProgress(silenceMs, started);
  for (;;) {
    if (!proc.running) return 'exited';
    let listening = false;
    try {
      // Bounded: the port may belong to something that accepts and never answers (a race lost to it).
      const res = await fetch(healthUrl, { signal: AbortSignal.timeout(2000) });
      listening = true;
      await res.arrayBuffer();
      if (res.status === 200) return 'up';
    } catch {
      // not listening yet
    }
    if (
      progress &&
      !progress.observe({ outputBytes: proc.outputBytes, cpuMs: cpuMsOf(proc.pid), listening }, Date.now())
    ) {
      // Exited meanwhile is the truer answer (its exit code and last lines say why).
      return proc.running ? 'silent' : 'exited';
    }
    if (Date.now() > deadline) return 'timeout';
    await sleep(100);
  }
}

function handleOf(
  name: ServiceName,
  label: string,
  port: number,
  metricsPort: number,
  url: string,
  env: Record<string, string>,
  proc: ManagedProcess,
): ServiceHandle {
  return {
    name,
    label,
    port,
    url,
    metricsPort,
    metricsUrl: `http://127.0.0.1:${metricsPort}`,
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
  /** Each service's longest start while it makes progress (StartServiceOptions.timeoutMs). */
  startTimeoutMs?: number;
  /** Each service's longest start without progress (StartServiceOptions.silenceMs). */
  silenceMs?: number;
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
    // The integrations service seals webhook secrets under this key: one per system, kept for its restarts.
    INTEGRATIONS_SECRET_KEY: randomBytes(32).toString('base64'),
    // The sessions shards seal every stored WhatsApp login under this key, kept for their restarts.
    SESSION_STATE_KEY: randomBytes(32).toString('base64'),
    ...options.env,
  };
  const wanted = options.services ?? ['templates', 'jobs', 'dashboard', 'sessions', 'integrations', 'contacts'];
  const handles: ServiceHandle[] = [];
  const start = (name: ServiceName, extraEnv: Record<string, string> = {}, label?: string) =>
    startService(name, {
      env: { ...baseEnv, ...options.serviceEnv?.[name], ...extraEnv },
      label,
      timeoutMs: options.startTimeoutMs,
      silenceMs: options.silenceMs,
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
        for (let k = 0; k < shards; k++)
          jobs.push(
            start('sessions', { ...options.serviceEnv?.[`sessions-${k}`], SHARD_INDEX: String(k) }, `sessions-${k}`),
          );
      } else {
        jobs.push(start(name));
      }
    }
    // Migrations of different schemas do not contend, so services start side by side, and the gateway
    // with them (it owns no schema and asks the others only when a request comes).
    const gatewayStarted = startService('gateway', {
      env: { ...baseEnv, ...options.serviceEnv?.gateway },
      port: options.gatewayPort,
      timeoutMs: options.startTimeoutMs,
      silenceMs: options.silenceMs,
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
