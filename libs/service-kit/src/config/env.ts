import { isIP } from 'node:net';

/**
 * Environment is read once at boot into a typed object. A missing or bad value stops the process with
 * a message that names the variable, before anything connects anywhere.
 */
export interface EnvVar<T> {
  /** Human text for the README and for error messages. */
  readonly doc: string;
  readonly defaultValue?: T;
  parse(raw: string): T;
}

export class EnvError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid environment:\n  ${problems.join('\n  ')}`);
    this.name = 'EnvError';
  }
}

type Spec = Record<string, EnvVar<unknown>>;
export type EnvOf<S extends Spec> = { readonly [K in keyof S]: S[K] extends EnvVar<infer T> ? T : never };

function variable<T>(doc: string, parse: (raw: string) => T, defaultValue?: T): EnvVar<T> {
  return { doc, parse, defaultValue };
}

export const env = {
  str(doc: string, defaultValue?: string): EnvVar<string> {
    return variable(
      doc,
      (raw) => {
        if (raw.trim() === '') throw new Error('must not be empty');
        return raw;
      },
      defaultValue,
    );
  },
  optionalStr(doc: string): EnvVar<string | undefined> {
    return variable<string | undefined>(doc, (raw) => (raw.trim() === '' ? undefined : raw), undefined);
  },
  int(doc: string, defaultValue: number | undefined, range: { min?: number; max?: number } = {}): EnvVar<number> {
    return variable(
      doc,
      (raw) => {
        if (!/^-?\d+$/.test(raw.trim())) throw new Error(`must be an integer, got "${raw}"`);
        const n = Number(raw);
        if (range.min !== undefined && n < range.min) throw new Error(`must be ≥ ${range.min}, got ${n}`);
        if (range.max !== undefined && n > range.max) throw new Error(`must be ≤ ${range.max}, got ${n}`);
        return n;
      },
      defaultValue,
    );
  },
  bool(doc: string, defaultValue: boolean): EnvVar<boolean> {
    return variable(
      doc,
      (raw) => {
        const v = raw.trim().toLowerCase();
        if (['1', 'true', 'yes', 'on'].includes(v)) return true;
        if (['0', 'false', 'no', 'off'].includes(v)) return false;
        throw new Error(`must be true or false, got "${raw}"`);
      },
      defaultValue,
    );
  },
  oneOf<const T extends string>(doc: string, values: readonly T[], defaultValue?: T): EnvVar<T> {
    return variable(
      doc,
      (raw) => {
        if (!values.includes(raw as T)) throw new Error(`must be one of ${values.join(', ')}, got "${raw}"`);
        return raw as T;
      },
      defaultValue,
    );
  },
  url(doc: string, protocols: readonly string[], defaultValue?: string): EnvVar<string> {
    return variable(
      doc,
      (raw) => {
        let parsed: URL;
        try {
          parsed = new URL(raw);
        } catch {
          throw new Error(`must be a URL, got "${raw}"`);
        }
        if (!protocols.includes(parsed.protocol.replace(/:$/, ''))) {
          throw new Error(`must use ${protocols.join(' or ')}, got "${parsed.protocol}"`);
        }
        return raw;
      },
      defaultValue,
    );
  },
  /** An IP address (v4 or v6) to listen on, or unset (`undefined`: every address). */
  optionalIp(doc: string): EnvVar<string | undefined> {
    return variable<string | undefined>(
      doc,
      (raw) => {
        const value = raw.trim();
        if (value === '') return undefined;
        if (isIP(value) === 0) throw new Error(`must be an IP address such as 127.0.0.1, 0.0.0.0 or ::, got "${raw}"`);
        return value;
      },
      undefined,
    );
  },
  list(doc: string, defaultValue: string[] = []): EnvVar<string[]> {
    return variable(
      doc,
      (raw) =>
        raw
          .split(',')
          .map((s) => s.trim())
          .filter(Boolean),
      defaultValue,
    );
  },
};

export function loadEnv<S extends Spec>(spec: S, source: NodeJS.ProcessEnv = process.env): EnvOf<S> {
  const problems: string[] = [];
  const out: Record<string, unknown> = {};
  for (const [name, v] of Object.entries(spec)) {
    const raw = source[name];
    if (raw === undefined || raw === '') {
      if (v.defaultValue !== undefined) {
        out[name] = v.defaultValue;
        continue;
      }
      // Optional variables parse an empty value to `undefined`; required ones refuse it.
      try {
        out[name] = v.parse('');
      } catch {
        problems.push(`${name} is required (${v.doc})`);
      }
      continue;
    }
    try {
      out[name] = v.parse(raw);
    } catch (err) {
      problems.push(`${name} ${(err as Error).message} (${v.doc})`);
    }
  }
  if (problems.length > 0) throw new EnvError(problems);
  return out as EnvOf<S>;
}

/** Boot-time variant: prints one line per bad variable and exits 1. */
export function loadEnvOrExit<S extends Spec>(spec: S, service: string): EnvOf<S> {
  try {
    return loadEnv(spec);
  } catch (err) {
    if (err instanceof EnvError) {
      process.stderr.write(`${service}: ${err.message}\n`);
      process.exit(1);
    }
    throw err;
  }
}

/** Variables every service reads. */
export const COMMON_ENV = {
  NATS_URL: env.url('NATS server URL', ['nats', 'tls'], 'nats://127.0.0.1:4222'),
  LOG_LEVEL: env.oneOf(
    'pino log level',
    ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const,
    'info',
  ),
  OTEL_EXPORTER_OTLP_ENDPOINT: env.optionalStr('OTLP/HTTP collector base URL; tracing is off when unset'),
  SESSIONS_SHARDS: env.int('number of sessions shards (replicas of the sessions service)', 2, { min: 1, max: 1024 }),
  RPC_TIMEOUT_MS: env.int('timeout of a request to another service over NATS', 10_000, { min: 100 }),
  // Its own port, so that whatever reaches the HTTP port (the gateway's is public) cannot read it, and a
  // NetworkPolicy can admit the scraper to this port alone. 9464 is the port OpenTelemetry's Prometheus
  // exporter uses; each process has its own network namespace in a pod, so every service can share it.
  METRICS_PORT: env.int(
    'port of the Prometheus metrics endpoint (`/metrics`), kept off the HTTP port; must differ from PORT; 0 = a free port the system picks (logged at start)',
    9464,
    { min: 0, max: 65535 },
  ),
  BIND_ADDRESS: env.optionalIp(
    'address the HTTP and metrics ports listen on: 127.0.0.1 = this machine only (what npm start and the tests use); unset = every address, IPv4 and IPv6 (containers, Kubernetes)',
  ),
};

export const DATABASE_ENV = {
  DATABASE_URL: env.url('Postgres URL of this service (its own schema is created in it)', ['postgres', 'postgresql']),
  DATABASE_POOL_SIZE: env.int('Postgres connection pool size', 10, { min: 1, max: 200 }),
};
