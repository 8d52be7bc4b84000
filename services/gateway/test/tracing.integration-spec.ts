import { randomBytes } from 'node:crypto';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { api, revalidationsAnswered, startSystem, waitFor, type DevSession, type System } from '@bns/testing';
import { linkedUser } from './linked-user.js';

interface CollectedSpan {
  service: string;
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  kind: number;
  attributes: Record<string, unknown>;
}

/** OTLP/HTTP JSON as the exporter posts it to /v1/traces: resourceSpans → scopeSpans → spans. */
interface OtlpBody {
  resourceSpans?: {
    resource?: { attributes?: { key: string; value: { stringValue?: string } }[] };
    scopeSpans?: {
      spans?: {
        traceId: string;
        spanId: string;
        parentSpanId?: string;
        name: string;
        kind: number;
        attributes?: { key: string; value: Record<string, unknown> }[];
      }[];
    }[];
  }[];
}

const SPAN_KIND_SERVER = 2;
const PHONE = '91230041';

/**
 * OpenTelemetry end to end (DESIGN: one HTTP request is one trace across services): the gateway and
 * jobs export to an OTLP/HTTP collector run here, and a poll that carries a `traceparent` shows up as
 * the gateway's server span and the jobs service's handler span in that one trace. A revalidation the
 * gateway answers from memory, before Express (FrontDoor), still gets its server span. No span holds
 * a phone number.
 */
describe('tracing', () => {
  let sys: System;
  let collector: Server;
  const bodies: string[] = [];

  const spans = (): CollectedSpan[] =>
    bodies.flatMap((text) =>
      ((JSON.parse(text) as OtlpBody).resourceSpans ?? []).flatMap((rs) => {
        const service = rs.resource?.attributes?.find((a) => a.key === 'service.name')?.value.stringValue ?? '';
        return (rs.scopeSpans ?? []).flatMap((ss) =>
          (ss.spans ?? []).map((s) => ({
            service,
            traceId: s.traceId,
            spanId: s.spanId,
            parentSpanId: s.parentSpanId ?? '',
            name: s.name,
            kind: s.kind,
            attributes: Object.fromEntries((s.attributes ?? []).map((a) => [a.key, Object.values(a.value)[0]])),
          })),
        );
      }),
    );

  /** A GET carrying a new trace's `traceparent`; answers the status and the trace id. */
  const traced = (
    who: DevSession,
    path: string,
    headers: Record<string, string> = {},
  ): Promise<{ status: number; etag?: string; traceId: string }> => {
    const traceId = randomBytes(16).toString('hex');
    return new Promise((resolve, reject) => {
      request(
        `${sys.gateway.url}${path}`,
        {
          headers: {
            authorization: `Bearer ${who.token}`,
            traceparent: `00-${traceId}-${randomBytes(8).toString('hex')}-01`,
            ...headers,
          },
        },
        (res) => {
          res.resume();
          res.on('end', () => resolve({ status: res.statusCode!, etag: res.headers.etag, traceId }));
        },
      )
        .on('error', reject)
        .end();
    });
  };

  beforeAll(async () => {
    collector = createServer((req, res) => {
      let text = '';
      req.setEncoding('utf8');
      req.on('data', (d: string) => (text += d));
      req.on('end', () => {
        if (req.url === '/v1/traces') bodies.push(text);
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      });
    });
    await new Promise<void>((resolve) => collector.listen(0, '127.0.0.1', resolve));
    const endpoint = `http://127.0.0.1:${(collector.address() as AddressInfo).port}`;
    sys = await startSystem({
      shards: 1,
      services: ['jobs', 'sessions'],
      env: { SIM_READY_DELAY_MS: '50' },
      // Exported within 100 ms of ending, as JSON.
      serviceEnv: {
        gateway: { OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_BSP_SCHEDULE_DELAY: '100' },
        jobs: { OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_BSP_SCHEDULE_DELAY: '100' },
      },
    });
  }, 120_000);

  afterAll(async () => {
    await sys?.stop();
    collector?.close();
  });

  it("a poll is one trace: the gateway's server span and the jobs service's handler span; a 304 from memory has its span too; no phone number in any span", async () => {
    const me = await linkedUser(sys.gateway.url, 'trace@shop.hk');
    const started = await api(sys.gateway.url, me.token).post('/start-bulk-messages', {
      clerkUserId: me.userId,
      message: 'Hi',
      phoneNumbers: [PHONE],
      startAt: new Date(Date.now() + 3_600_000).toISOString(),
    });
    expect(started.status).toBe(200);
    const jobId = started.body.jobId as string;

    const whole = await traced(me, `/job-status/${jobId}`);
    expect(whole.status).toBe(200);
    /** The trace's spans, once each of `services` has exported its server span of it (each exports on its own schedule). */
    const inTrace = async (traceId: string, services: string[]) => {
      const of = () => spans().filter((s) => s.traceId === traceId);
      await waitFor(
        () => services.every((service) => of().some((s) => s.service === service && s.kind === SPAN_KIND_SERVER)),
        10_000,
        50,
        `server spans of ${services.join(', ')} in trace ${traceId}`,
      );
      return of();
    };
    const poll = await inTrace(whole.traceId, ['gateway', 'jobs']);
    const server = poll.find((s) => s.service === 'gateway' && s.kind === SPAN_KIND_SERVER);
    expect(server).toMatchObject({
      name: `GET /job-status/${jobId}`,
      attributes: { 'http.request.method': 'GET', 'http.response.status_code': 200 },
    });
    expect(poll.find((s) => s.service === 'jobs' && s.name === 'handle jobs.status')).toBeDefined();

    // Revalidations until one is answered from memory (an event of the user's may send one to the jobs service first).
    let fromMemory: { status: number; traceId: string } | undefined;
    await waitFor(
      async () => {
        const before = await revalidationsAnswered(sys.gateway.metricsUrl);
        const answer = await traced(me, `/job-status/${jobId}`, { 'if-none-match': whole.etag! });
        expect(answer.status).toBe(304);
        if ((await revalidationsAnswered(sys.gateway.metricsUrl)).memory === before.memory + 1) fromMemory = answer;
        return fromMemory !== undefined;
      },
      10_000,
      100,
      'a revalidation answered from memory',
    );
    const [memorySpan] = await inTrace(fromMemory!.traceId, ['gateway']);
    expect(memorySpan).toMatchObject({
      service: 'gateway',
      kind: SPAN_KIND_SERVER,
      name: `GET /job-status/${jobId}`,
      attributes: { 'http.response.status_code': 304 },
    });
    expect(spans().filter((s) => s.traceId === fromMemory!.traceId && s.service === 'jobs')).toEqual([]);

    expect(bodies.join('\n')).not.toContain(PHONE);
  }, 60_000);
});
