import {
  Counter,
  Gauge,
  Histogram,
  Registry,
  collectDefaultMetrics,
  type CounterConfiguration,
  type GaugeConfiguration,
  type HistogramConfiguration,
} from 'prom-client';
import type { NextFunction, Request, Response } from 'express';

/**
 * One Prometheus registry per process, served at `/metrics` on a port of its own (METRICS_PORT, see
 * MetricsEndpoint). Every metric is `bns_*`; labels are bounded sets (subjects, route templates,
 * outcomes, states, shards), never a user id, phone number or job id: those would explode the series
 * count and leak personal data.
 */
export const metricsRegistry = new Registry();

let defaultsOn = false;
/** Process and runtime metrics (CPU, memory, event loop lag, GC, handles), once per process. */
export function collectProcessMetrics(labels: Record<string, string>): void {
  if (defaultsOn) return;
  defaultsOn = true;
  metricsRegistry.setDefaultLabels(labels);
  collectDefaultMetrics({ register: metricsRegistry });
}

// Metrics are module singletons; a test process that boots a service twice gets the same series.
// A gauge whose collect() reads a database is replaced instead, so it reads the newest one.
export function counter<L extends string>(config: CounterConfiguration<L>): Counter<L> {
  return (
    (metricsRegistry.getSingleMetric(config.name) as Counter<L> | undefined) ??
    new Counter({ ...config, registers: [metricsRegistry] })
  );
}
export function histogram<L extends string>(config: HistogramConfiguration<L>): Histogram<L> {
  return (
    (metricsRegistry.getSingleMetric(config.name) as Histogram<L> | undefined) ??
    new Histogram({ ...config, registers: [metricsRegistry] })
  );
}
export function gauge<L extends string>(config: GaugeConfiguration<L>): Gauge<L> {
  if (config.collect) metricsRegistry.removeSingleMetric(config.name);
  return (
    (metricsRegistry.getSingleMetric(config.name) as Gauge<L> | undefined) ??
    new Gauge({ ...config, registers: [metricsRegistry] })
  );
}

/** Latency buckets for requests between services and HTTP calls (seconds). */
export const LATENCY_BUCKETS = [0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

const RPC_CLIENT_REQUESTS: CounterConfiguration<'subject' | 'outcome'> = {
  name: 'bns_rpc_client_requests_total',
  help: 'NATS requests this process made, by subject and outcome (ok or the error kind)',
  labelNames: ['subject', 'outcome'],
};
const RPC_CLIENT_DURATION: HistogramConfiguration<'subject' | 'outcome'> = {
  name: 'bns_rpc_client_duration_seconds',
  help: 'Time from a NATS request to its reply, by subject and outcome',
  labelNames: ['subject', 'outcome'],
  buckets: LATENCY_BUCKETS,
};
const RPC_SERVER_REQUESTS: CounterConfiguration<'subject' | 'outcome'> = {
  name: 'bns_rpc_server_requests_total',
  help: 'NATS requests this process answered, by subject and outcome (ok or the error kind)',
  labelNames: ['subject', 'outcome'],
};
const RPC_SERVER_DURATION: HistogramConfiguration<'subject' | 'outcome'> = {
  name: 'bns_rpc_server_duration_seconds',
  help: 'Time to answer a NATS request, by subject and outcome',
  labelNames: ['subject', 'outcome'],
  buckets: LATENCY_BUCKETS,
};

/** `ok`, or the kind of the error (`unavailable`, `not_found`, …): a small, fixed set. */
export function outcomeOf(err: unknown): string {
  if (err === undefined || err === null) return 'ok';
  const kind = (err as { kind?: unknown }).kind;
  return typeof kind === 'string' && /^[a-z_]{1,32}$/.test(kind) ? kind : 'error';
}

/**
 * A counter and a histogram child per label set, looked up once: prom-client otherwise hashes the
 * label object (sorting its keys) on every inc and observe. Label sets are bounded (see above), and
 * so is this map. The children are bound to the metric objects of the moment, which a test process
 * may replace (see `counter`): a replaced pair starts a new map. Checking that takes two lookups by
 * name, with nothing built per call.
 */
function childCache<L extends string>(countConfig: CounterConfiguration<L>, timeConfig: HistogramConfiguration<L>) {
  let metrics: [Counter<L>, Histogram<L>] | undefined;
  let children = new Map<string, { inc: () => void; observe: (seconds: number) => void }>();
  return (key: string, labels: Record<L, string>) => {
    if (
      !metrics ||
      metricsRegistry.getSingleMetric(countConfig.name) !== metrics[0] ||
      metricsRegistry.getSingleMetric(timeConfig.name) !== metrics[1]
    ) {
      metrics = [counter(countConfig), histogram(timeConfig)];
      children = new Map();
    }
    let child = children.get(key);
    if (!child) {
      const [counted, timed] = [metrics[0].labels(labels), metrics[1].labels(labels)];
      child = { inc: () => counted.inc(), observe: (seconds) => timed.observe(seconds) };
      children.set(key, child);
    }
    return child;
  };
}

const rpcClientChild = childCache(RPC_CLIENT_REQUESTS, RPC_CLIENT_DURATION);
const rpcServerChild = childCache(RPC_SERVER_REQUESTS, RPC_SERVER_DURATION);

export function recordRpcClient(subject: string, outcome: string, seconds: number): void {
  const child = rpcClientChild(`${subject} ${outcome}`, { subject, outcome });
  child.inc();
  child.observe(seconds);
}

export function recordRpcServer(subject: string, outcome: string, seconds: number): void {
  const child = rpcServerChild(`${subject} ${outcome}`, { subject, outcome });
  child.inc();
  child.observe(seconds);
}

const httpChild = childCache<'method' | 'route' | 'status'>(
  {
    name: 'bns_http_requests_total',
    help: 'HTTP requests answered, by method, route template and status (429 = rate limited)',
    labelNames: ['method', 'route', 'status'],
  },
  {
    name: 'bns_http_request_duration_seconds',
    help: 'HTTP request duration, by method, route template and status',
    labelNames: ['method', 'route', 'status'],
    buckets: LATENCY_BUCKETS,
  },
);
const httpRateLimited = () =>
  counter({
    name: 'bns_http_rate_limited_total',
    help: 'HTTP requests refused with 429 by the per-user rate limit, by route template',
    labelNames: ['route'],
  });

/**
 * Counts every HTTP request at the end of its response, labelled with the route *template*
 * (`/api/jobs/:jobId`, never the id) that Express matched; guards' refusals (401, 429) count too.
 */
export function httpMetricsMiddleware(req: Request, res: Response, next: NextFunction): void {
  const started = performance.now();
  res.on('finish', () => {
    const template = (req.route as { path?: unknown } | undefined)?.path;
    recordHttpRequest(
      req.method,
      typeof template === 'string' ? `${req.baseUrl}${template}` : 'unmatched',
      res.statusCode,
      (performance.now() - started) / 1000,
    );
  });
  next();
}

/**
 * One answered HTTP request in `bns_http_requests_total` and its duration: what httpMetricsMiddleware
 * records, for an answer given before Express (the gateway's front door). `route` is a template.
 */
export function recordHttpRequest(method: string, route: string, statusCode: number, seconds: number): void {
  const status = String(statusCode);
  const child = httpChild(`${method} ${route} ${status}`, { method, route, status });
  child.inc();
  child.observe(seconds);
  if (statusCode === 429) httpRateLimited().inc({ route });
}
