import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { api, devSignIn, freePort, startSystem, waitFor, type System } from '@bns/testing';

interface SpanRecord {
  service: string;
  name: string;
  traceId: string;
}

/** A minimal OTLP/HTTP JSON receiver: what a collector would get from the services. */
function otlpReceiver(spans: SpanRecord[]): Server {
  return createServer((req, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      try {
        const data = JSON.parse(body);
        for (const rs of data.resourceSpans ?? []) {
          const service = rs.resource?.attributes?.find((a: { key: string }) => a.key === 'service.name')?.value
            ?.stringValue;
          for (const ss of rs.scopeSpans ?? [])
            for (const s of ss.spans ?? []) spans.push({ service, name: s.name, traceId: s.traceId });
        }
      } catch {
        // protobuf or garbage: ignored, the test then fails on missing spans
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
}

describe('OpenTelemetry across services', () => {
  const spans: SpanRecord[] = [];
  let receiver: Server;
  let sys: System;

  beforeAll(async () => {
    const port = await freePort();
    receiver = otlpReceiver(spans);
    await new Promise<void>((r) => receiver.listen(port, '127.0.0.1', r));
    sys = await startSystem({
      services: ['templates'],
      env: {
        OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}`,
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
        OTEL_BSP_SCHEDULE_DELAY: '200',
      },
    });
  });
  afterAll(async () => {
    await sys?.stop();
    receiver?.close();
  });

  it('makes one HTTP request one trace: gateway span, NATS client span and the templates handler span share a trace id', async () => {
    const user = await devSignIn(sys.gateway.url, 'trace@shop.hk');
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    const res = await api(sys.gateway.url, user.token).get(`/api/templates/${user.userId}/stats`, {
      traceparent: `00-${traceId}-00f067aa0ba902b7-01`,
    });
    expect(res.status).toBe(200);
    const expected = [
      `gateway: GET /api/templates/${user.userId}/stats`,
      'gateway: rpc templates.stats',
      'templates: handle templates.stats',
    ];
    const named = () => spans.filter((s) => s.traceId === traceId).map((s) => `${s.service}: ${s.name}`);
    // Each service exports its spans in batches of its own: wait for all three, not the first to arrive.
    await waitFor(() => expected.every((e) => named().includes(e)), 15_000, 200, 'the three spans of the trace');
    const inTrace = spans.filter((s) => s.traceId === traceId);
    expect(inTrace.map((s) => `${s.service}: ${s.name}`).sort()).toEqual(expect.arrayContaining(expected));
  });
});
