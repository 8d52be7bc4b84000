import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SERVICES } from '@bns/contracts';
import { startNats, startPostgres, type Nats, type Postgres } from './infra.js';
import { freePort, waitFor } from './process.js';
import { startService, type ServiceHandle, type ServiceName } from './services.js';

/**
 * Fault-injection building blocks: infrastructure that can be stopped and started again on the same
 * port and data (so every service's URL stays valid across the fault, as a Kubernetes Service's
 * does), and a system whose processes can be killed and restarted by label.
 */

/** A private Postgres that can go down and come back on the same port with the same data. */
export class RestartablePostgres {
  private current?: Postgres;
  private constructor(
    readonly folder: string,
    readonly port: number,
    private readonly onLog?: (line: string) => void,
  ) {}

  static async start(options: { onLog?: (line: string) => void } = {}): Promise<RestartablePostgres> {
    const pg = new RestartablePostgres(mkdtempSync(join(tmpdir(), 'bns-fault-pg-')), await freePort(), options.onLog);
    await pg.up();
    return pg;
  }

  get url(): string {
    return `postgres://postgres:postgres@127.0.0.1:${this.port}/bns`;
  }

  get running(): boolean {
    return this.current !== undefined;
  }

  async up(): Promise<void> {
    if (this.current) return;
    this.current = await startPostgres({ dataDir: join(this.folder, 'data'), port: this.port, onLog: this.onLog });
  }

  /** A fast shutdown (SIGINT): open connections are cut, as in a failover or a restart of the server. */
  async down(): Promise<void> {
    const pg = this.current;
    this.current = undefined;
    await pg?.stop();
  }

  async destroy(): Promise<void> {
    await this.down();
    rmSync(this.folder, { recursive: true, force: true });
  }

  /** The shape `startSystem` and friends take; stopping it removes the data. */
  asPostgres(): Postgres {
    return { url: this.url, port: this.port, stop: () => this.destroy() };
  }
}

/** A private nats-server with JetStream that can restart on the same port and store (streams and consumers survive). */
export class RestartableNats {
  private current?: Nats;
  private constructor(
    readonly storeDir: string,
    readonly port: number,
  ) {}

  static async start(): Promise<RestartableNats> {
    const nats = new RestartableNats(mkdtempSync(join(tmpdir(), 'bns-fault-nats-')), await freePort());
    await nats.up();
    return nats;
  }

  get url(): string {
    return `nats://127.0.0.1:${this.port}`;
  }

  get running(): boolean {
    return this.current !== undefined;
  }

  /** Starts it on its port; `empty`: on an empty store (streams, buckets and consumers gone). */
  async up(options: { empty?: boolean } = {}): Promise<void> {
    if (this.current) return;
    if (options.empty) rmSync(this.storeDir, { recursive: true, force: true });
    this.current = await startNats({ storeDir: this.storeDir, port: this.port });
  }

  /** SIGKILL: no clean shutdown; what was only in its memory is lost. */
  async kill9(): Promise<void> {
    const nats = this.current;
    this.current = undefined;
    await nats?.process.kill9();
  }

  /** SIGTERM (nats-server's clean shutdown: clients see a disconnect and start reconnecting). */
  async down(): Promise<void> {
    const nats = this.current;
    this.current = undefined;
    await nats?.process.stop(5000);
  }

  async destroy(): Promise<void> {
    await this.down();
    rmSync(this.storeDir, { recursive: true, force: true });
  }
}

/** One process of the system: how to start it again exactly as it was. */
interface ProcessSpec {
  name: ServiceName;
  label: string;
  port: number;
  env: Record<string, string>;
}

export interface FaultSystemOptions {
  shards?: number;
  /** Jobs replicas, labelled jobs-a, jobs-b, …: with two, one survives the other's kill -9 and takes its lanes over. */
  jobsReplicas?: number;
  /** Env for every service. */
  env?: Record<string, string>;
  serviceEnv?: Partial<Record<ServiceName, Record<string, string>>>;
  onLine?: (label: string, line: string) => void;
}

/** Answers 200 on /readyz (the gateway's needs every service and shard to answer a ping). */
export async function isReady(url: string): Promise<boolean> {
  try {
    const res = await fetch(`${url}/readyz`, { signal: AbortSignal.timeout(2000) });
    await res.arrayBuffer();
    return res.status === 200;
  } catch {
    return false;
  }
}

/**
 * The whole system as spawned processes over a restartable Postgres and NATS, each process on a fixed
 * port so it can be killed and started again by label (gateway, sessions-<k>, jobs-a, jobs-b, and one
 * process for each other service: templates, dashboard, integrations …).
 */
export class FaultSystem {
  readonly handles = new Map<string, ServiceHandle>();
  private readonly specs = new Map<string, ProcessSpec>();

  private constructor(
    readonly postgres: RestartablePostgres,
    readonly nats: RestartableNats,
    private readonly onLine?: (label: string, line: string) => void,
  ) {}

  static async start(options: FaultSystemOptions = {}): Promise<FaultSystem> {
    const postgres = await RestartablePostgres.start();
    const nats = await RestartableNats.start();
    const system = new FaultSystem(postgres, nats, options.onLine);
    const shards = options.shards ?? 2;
    const base: Record<string, string> = {
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
    const envOf = (name: ServiceName, extra: Record<string, string> = {}) => ({
      ...base,
      ...options.serviceEnv?.[name],
      ...extra,
    });
    // Every service the gateway's /readyz asks for, one process each; jobs and sessions as replicas below.
    const singles = SERVICES.filter((name) => name !== 'jobs' && name !== 'sessions');
    const specs: ProcessSpec[] = [
      ...singles.map((name) => ({ name, label: name, port: 0, env: envOf(name) })),
      ...Array.from({ length: options.jobsReplicas ?? 1 }, (_, i) => ({
        name: 'jobs' as const,
        label: `jobs-${String.fromCharCode(97 + i)}`,
        port: 0,
        env: envOf('jobs'),
      })),
      ...Array.from({ length: shards }, (_, k) => ({
        name: 'sessions' as const,
        label: `sessions-${k}`,
        port: 0,
        env: envOf('sessions', { SHARD_INDEX: String(k) }),
      })),
    ];
    for (const spec of specs) spec.port = await freePort();
    const gateway: ProcessSpec = { name: 'gateway', label: 'gateway', port: await freePort(), env: envOf('gateway') };
    try {
      // Every start settles before a failure is thrown: a process still starting when a sibling failed
      // would otherwise come up after `stop` and keep the test run from ending.
      const started = await Promise.allSettled(specs.map((s) => system.spawn(s)));
      const failed = started.find((r): r is PromiseRejectedResult => r.status === 'rejected');
      if (failed) throw failed.reason;
      await system.spawn(gateway);
      await waitFor(() => isReady(system.gatewayUrl), 60_000, 100, 'the gateway to be ready');
      return system;
    } catch (err) {
      await system.stop();
      throw err;
    }
  }

  get gatewayUrl(): string {
    return `http://127.0.0.1:${this.specs.get('gateway')?.port ?? 0}`;
  }

  get labels(): string[] {
    return [...this.specs.keys()];
  }

  handle(label: string): ServiceHandle {
    const h = this.handles.get(label);
    if (!h) throw new Error(`no process labelled ${label}`);
    return h;
  }

  urlOf(label: string): string {
    const spec = this.specs.get(label);
    if (!spec) throw new Error(`no process labelled ${label}`);
    return `http://127.0.0.1:${spec.port}`;
  }

  /** SIGKILL: no shutdown hook runs, nothing is handed over. Answers when it happened (epoch ms). */
  async kill9(label: string): Promise<number> {
    const h = this.handle(label);
    const at = Date.now();
    await h.kill9();
    return at;
  }

  /** Starts a stopped or killed process again on its port with its env; resolves once it answers /healthz. */
  async restart(label: string): Promise<ServiceHandle> {
    const spec = this.specs.get(label);
    if (!spec) throw new Error(`no process labelled ${label}`);
    if (this.handles.get(label)?.process.running) throw new Error(`${label} is still running`);
    return this.spawn(spec);
  }

  /** Until every process answers /readyz 200; answers the time it took (ms). */
  async waitAllReady(timeoutMs = 60_000): Promise<number> {
    const t = Date.now();
    await waitFor(
      async () => (await Promise.all(this.labels.map((l) => isReady(this.urlOf(l))))).every(Boolean),
      timeoutMs,
      100,
      'every service to be ready',
    );
    return Date.now() - t;
  }

  async stop(): Promise<void> {
    await Promise.all([...this.handles.values()].map((h) => h.stop().catch(() => undefined)));
    await this.nats.destroy();
    await this.postgres.destroy();
  }

  private async spawn(spec: ProcessSpec): Promise<ServiceHandle> {
    this.specs.set(spec.label, spec);
    const handle = await startService(spec.name, {
      env: spec.env,
      port: spec.port,
      label: spec.label,
      onLine: this.onLine && ((line) => this.onLine!(spec.label, line)),
    });
    this.handles.set(spec.label, handle);
    return handle;
  }
}
