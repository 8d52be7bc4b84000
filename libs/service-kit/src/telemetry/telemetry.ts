import { context, propagation, trace, SpanKind, SpanStatusCode, type Context, type Span } from '@opentelemetry/api';
import { headers, type MsgHdrs } from '@nats-io/transport-node';

let sdkShutdown: (() => Promise<void>) | undefined;

/**
 * Starts OpenTelemetry before Nest is imported. Tracing exports over OTLP/HTTP only when
 * OTEL_EXPORTER_OTLP_ENDPOINT is set; otherwise the API stays a no-op and costs nothing.
 */
export async function startTelemetry(serviceName: string): Promise<void> {
  if (!process.env.OTEL_EXPORTER_OTLP_ENDPOINT) return;
  const [{ NodeSDK }, { OTLPTraceExporter }] = await Promise.all([
    import('@opentelemetry/sdk-node'),
    import('@opentelemetry/exporter-trace-otlp-http'),
  ]);
  const sdk = new NodeSDK({ serviceName, traceExporter: new OTLPTraceExporter(), instrumentations: [] });
  sdk.start();
  sdkShutdown = () => sdk.shutdown();
}

/** Whether spans are exported (OTEL_EXPORTER_OTLP_ENDPOINT set): without it, per-request span work can be skipped. */
export function tracingEnabled(): boolean {
  return sdkShutdown !== undefined;
}

export async function stopTelemetry(): Promise<void> {
  await sdkShutdown?.();
}

export const tracer = trace.getTracer('bns');

/** Runs `fn` in a new active span that ends (and records a failure) when `fn` settles. */
export function withSpan<T>(
  name: string,
  kind: SpanKind,
  fn: (span: Span) => Promise<T>,
  parent: Context = context.active(),
): Promise<T> {
  return tracer.startActiveSpan(name, { kind }, parent, async (span) => {
    try {
      return await fn(span);
    } catch (err) {
      span.recordException(err as Error);
      span.setStatus({ code: SpanStatusCode.ERROR });
      throw err;
    } finally {
      span.end();
    }
  });
}

/** Writes the active trace context into NATS headers (W3C traceparent). */
export function injectTraceHeaders(hdrs: MsgHdrs, ctx: Context = context.active()): void {
  propagation.inject(ctx, hdrs, { set: (carrier, key, value) => carrier.set(key, value) });
}

/**
 * The active trace context as NATS headers, or undefined when there is none to carry (tracing off):
 * a message without headers is a plain PUB, smaller and cheaper to encode than an empty HPUB.
 */
export function traceHeaders(ctx: Context = context.active()): MsgHdrs | undefined {
  let hdrs: MsgHdrs | undefined;
  propagation.inject(ctx, undefined, { set: (_carrier, key, value) => (hdrs ??= headers()).set(key, value) });
  return hdrs;
}

/** Reads a trace context out of NATS headers, if any. */
export function extractTraceContext(hdrs: MsgHdrs | undefined): Context {
  if (!hdrs) return context.active();
  return propagation.extract(context.active(), hdrs, {
    get: (carrier, key) => carrier.get(key) || undefined,
    keys: (carrier) => carrier.keys(),
  });
}

export { SpanKind };
