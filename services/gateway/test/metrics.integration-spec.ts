import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { io, type Socket } from 'socket.io-client';
import { SOCKET, SOCKET_CLIENT_EVENTS, SOCKET_EVENTS, type JobProgressEvent, type JobView } from '@bns/contracts';
import { connectNats } from '@bns/service-kit';
import { api, devSignIn, simulatorScan, startSystem, waitFor, type ServiceHandle, type System } from '@bns/testing';

const NOT_ON_WHATSAPP = '98000002';
const PHONES = ['98000001', NOT_ON_WHATSAPP, '98000003'];

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** Prometheus text format → samples (comments skipped; label values unescaped). */
function parse(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})?\s+(\S+)/.exec(line);
    if (!m) throw new Error(`not a Prometheus sample: ${line}`);
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g))
      labels[l[1]!] = l[2]!.replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c));
    samples.push({ name: m[1]!, labels, value: Number(m[3]) });
  }
  return samples;
}

/** Sum of the samples of `name` whose labels include `match`. */
const total = (samples: Sample[], name: string, match: Record<string, string> = {}) =>
  samples
    .filter((s) => s.name === name && Object.entries(match).every(([k, v]) => s.labels[k] === v))
    .reduce((a, s) => a + s.value, 0);

async function scrape(h: ServiceHandle): Promise<{ text: string; samples: Sample[]; ms: number }> {
  const t0 = performance.now();
  const res = await fetch(`${h.metricsUrl}/metrics`);
  const text = await res.text();
  const ms = performance.now() - t0;
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
  return { text, samples: parse(text), ms };
}

/**
 * Every service's /metrics after one small real job (gateway → jobs → sessions, simulated WhatsApp,
 * events to the dashboard): the job's counts are in the counters of each service on its way, and no
 * label carries a user id, phone number or UUID.
 */
describe('/metrics of every service after a small job', () => {
  let sys: System;
  let socket: Socket | undefined;
  let userId = '';
  let jobId = '';
  const scrapes = new Map<string, { text: string; samples: Sample[]; ms: number }>();

  beforeAll(async () => {
    sys = await startSystem({
      shards: 2,
      env: {
        SIM_QR_INTERVAL_MS: '5000',
        SIM_READY_DELAY_MS: '50',
        SIM_FAIL_NUMBERS: `852${NOT_ON_WHATSAPP}`,
        SIM_DELIVERED_DELAY_MS: '50',
        SIM_READ_DELAY_MS: '100',
      },
      serviceEnv: { jobs: { SEND_DELAY_MS: '100' } },
    });
    const session = await devSignIn(sys.gateway.url, 'metrics@shop.hk');
    userId = session.userId;
    const http = api(sys.gateway.url, session.token);
    const s = io(sys.gateway.url, {
      path: SOCKET.path,
      transports: [...SOCKET.transports],
      auth: { token: session.token },
      reconnection: false,
      forceNew: true,
    });
    socket = s;
    let ready = false;
    s.on(SOCKET_EVENTS.ready, () => (ready = true));
    await new Promise<void>((resolve, reject) => {
      s.once('connect', () => resolve());
      s.once('connect_error', reject);
    });
    s.emit(SOCKET_CLIENT_EVENTS.createSession, { id: userId, clerkUserId: userId, isExplicitRequest: true });
    await simulatorScan(sys.gateway.url, session.token);
    await waitFor(() => ready, 30_000, 25, 'ready');

    expect((await http.get(`/api/templates/${userId}/stats`)).status).toBe(200);
    const started = await http.post('/start-bulk-messages', {
      clerkUserId: userId,
      message: 'Metrics check',
      phoneNumbers: PHONES,
    });
    expect(started.status).toBe(200);
    jobId = started.body.jobId as string;
    const job = await waitFor(
      async () => {
        const j = (await http.get(`/job-status/${jobId}`)).body.job as JobView;
        return j.status === 'completed' ? j : undefined;
      },
      60_000,
      100,
      'the job to complete',
    );
    expect(job.progress).toEqual({ total: 3, sent: 2, failed: 1 });
    // The read model and the receipts follow the job through JetStream: wait until they are in.
    await waitFor(
      async () => {
        const d = (await http.get(`/api/dashboard/${userId}`)).body.data as { messages: Array<{ status: string }> };
        return d.messages.filter((m) => m.status === 'read').length === 2;
      },
      30_000,
      100,
      'the dashboard to show both sent messages read',
    );

    // The figure reported is the median of 20 scrapes (the first pays for lazy work: pool, JetStream manager).
    const medians: string[] = [];
    for (const h of sys.services) {
      await scrape(h);
      const times: number[] = [];
      for (let i = 0; i < 20; i++) times.push((await scrape(h)).ms);
      times.sort((a, b) => a - b);
      const last = await scrape(h);
      scrapes.set(h.label, last);
      medians.push(`${h.label} ${times[10]!.toFixed(1)} ms (${(last.text.length / 1024).toFixed(0)} KiB)`);
    }
    process.stdout.write(`# /metrics scrape time, median of 20: ${medians.join(', ')}\n`);
  }, 240_000);

  afterAll(async () => {
    socket?.close();
    await sys?.stop();
  });

  const of = (label: string) => scrapes.get(label)!.samples;
  const sessions = () => [...scrapes].filter(([l]) => l.startsWith('sessions-')).flatMap(([, s]) => s.samples);

  it('every service serves process metrics and its NATS request metrics', () => {
    expect([...scrapes.keys()].sort()).toEqual([
      'contacts',
      'dashboard',
      'gateway',
      'integrations',
      'jobs',
      'sessions-0',
      'sessions-1',
      'templates',
    ]);
    for (const [label, { samples }] of scrapes) {
      expect({ label, cpu: samples.some((s) => s.name === 'process_cpu_user_seconds_total') }).toEqual({
        label,
        cpu: true,
      });
      expect({ label, service: samples.every((s) => s.labels.bns_service === label.replace(/-\d+$/, '')) }).toEqual({
        label,
        service: true,
      });
    }
    expect(total(of('templates'), 'bns_rpc_server_requests_total', { subject: 'templates.stats', outcome: 'ok' })).toBe(
      1,
    );
    expect(total(of('gateway'), 'bns_rpc_client_requests_total', { subject: 'templates.stats', outcome: 'ok' })).toBe(
      1,
    );
    expect(
      total(of('gateway'), 'bns_rpc_client_duration_seconds_count', { subject: 'jobs.start', outcome: 'ok' }),
    ).toBe(1);
  });

  it('jobs counts the job: 2 sent, 1 failed as not on WhatsApp, one completed job, an empty queue', () => {
    const jobs = of('jobs');
    expect(total(jobs, 'bns_jobs_messages_total', { result: 'sent' })).toBe(2);
    expect(total(jobs, 'bns_jobs_messages_total', { result: 'failed', reason: 'not_on_whatsapp' })).toBe(1);
    expect(total(jobs, 'bns_jobs_finished_total', { status: 'completed' })).toBe(1);
    expect(total(jobs, 'bns_jobs_jobs', { status: 'completed' })).toBe(1);
    expect(total(jobs, 'bns_jobs_queue_depth')).toBe(0);
    // One observation per send; a retry after a timeout on a loaded machine would add one.
    expect(total(jobs, 'bns_jobs_pace_lag_seconds_count')).toBeGreaterThanOrEqual(3);
    expect(jobs.some((s) => s.name === 'bns_jobs_outbox_backlog')).toBe(true);
    expect(jobs.some((s) => s.name === 'bns_jobs_lanes' && s.labels.state === 'held')).toBe(true);
    // Its three sends to the user's shard, seen from the client side.
    const sends = jobs.filter(
      (s) => s.name === 'bns_rpc_client_requests_total' && /^sessions\.\d+\.send$/.test(s.labels.subject ?? ''),
    );
    expect(sends.reduce((a, s) => a + s.value, 0)).toBeGreaterThanOrEqual(3);
  });

  it("sessions counts the link, the sends and the receipts on the user's shard", () => {
    const all = sessions();
    expect(total(all, 'bns_sessions_links', { state: 'ready' })).toBe(1);
    expect(total(all, 'bns_sessions_sends_total', { outcome: 'sent' })).toBe(2);
    // The number that is not on WhatsApp, by its error code (a bounded set), never by the number.
    expect(total(all, 'bns_sessions_sends_total', { outcome: 'NOT_ON_WHATSAPP' })).toBeGreaterThanOrEqual(1);
    expect(total(all, 'bns_sessions_receipts_total', { status: 'read' })).toBe(2);
    expect(total(all, 'bns_sessions_engine_processes')).toBe(0);
    expect(total(all, 'bns_rpc_server_requests_total', { outcome: 'ok' })).toBeGreaterThanOrEqual(3);
  });

  it('dashboard counts the events it applied and shows no lag', () => {
    const d = of('dashboard');
    // 3 sent/failed from jobs + 2 delivered + 2 read from sessions.
    expect(total(d, 'bns_dashboard_events_applied_total', { subject: 'events.message.status' })).toBe(7);
    expect(total(d, 'bns_dashboard_events_applied_total', { subject: 'events.session.state' })).toBeGreaterThanOrEqual(
      2,
    );
    expect(total(d, 'bns_dashboard_apply_batch_duration_seconds_count')).toBeGreaterThan(0);
    // One durable consumer per subject the read model follows (message status, session state, replies,
    // job progress for the skipped counts), and the one that hears account deletions.
    expect(d.filter((s) => s.name === 'bns_dashboard_consumer_pending').length).toBe(5);
    expect(total(d, 'bns_dashboard_consumer_pending')).toBe(0);
  });

  it('gateway counts HTTP calls by route template and status, the socket and its events', () => {
    const g = of('gateway');
    expect(total(g, 'bns_http_requests_total', { method: 'POST', route: '/start-bulk-messages', status: '200' })).toBe(
      1,
    );
    expect(
      total(g, 'bns_http_requests_total', { method: 'GET', route: '/job-status/:jobId', status: '200' }),
    ).toBeGreaterThan(0);
    expect(total(g, 'bns_http_request_duration_seconds_count', { route: '/api/dashboard/:userId' })).toBeGreaterThan(0);
    expect(total(g, 'bns_gateway_sockets_connected')).toBe(1);
    expect(total(g, 'bns_gateway_socket_events_sent_total')).toBeGreaterThan(0);
  });

  it('serves metrics on the metrics port only: the public port answers 404 for /metrics', async () => {
    const res = await fetch(`${sys.gateway.url}/metrics`);
    expect(res.status).toBe(404);
    expect(await res.text()).not.toMatch(/^process_cpu_user_seconds_total/m);
  });

  it('counts 429s of the rate limit by route', async () => {
    const fresh = await devSignIn(sys.gateway.url, 'burst@shop.hk');
    const http = api(sys.gateway.url, fresh.token);
    let limited = 0;
    for (let i = 0; i < 200 && limited === 0; i++)
      if ((await http.get(`/api/templates/${fresh.userId}/stats`)).status === 429) limited++;
    expect(limited).toBe(1);
    const g = (await scrape(sys.gateway)).samples;
    expect(total(g, 'bns_http_rate_limited_total', { route: '/api/templates/:userId/stats' })).toBe(1);
    expect(total(g, 'bns_http_requests_total', { route: '/api/templates/:userId/stats', status: '429' })).toBe(1);
  });

  it('pushes an event only where its user has a socket: events of users with none on this replica are not emitted or counted', async () => {
    const heard: unknown[] = [];
    let anyHeard = 0;
    socket!.onAny(() => anyHeard++);
    socket!.on(SOCKET_EVENTS.jobProgress, (p) => heard.push(p));
    await new Promise((r) => setTimeout(r, 300));
    anyHeard = 0;
    const before = total((await scrape(sys.gateway)).samples, 'bns_gateway_socket_events_sent_total');
    const progress = (user: string, job: string): JobProgressEvent => ({
      eventId: randomUUID(),
      userId: user,
      at: new Date().toISOString(),
      jobId: job,
      status: 'running',
      progress: { total: 5, sent: 1, failed: 0 },
    });
    const nc = await connectNats(sys.nats.url, 'metrics-spec');
    try {
      // Five for a user with no socket anywhere, then one for ours: the gateway hears them in this order.
      for (let i = 0; i < 5; i++)
        nc.publish('events.job.progress', JSON.stringify(progress(`user_nobody_${i}`, randomUUID())));
      const mine = randomUUID();
      nc.publish('events.job.progress', JSON.stringify(progress(userId, mine)));
      await waitFor(
        () => heard.some((p) => (p as { jobId?: string }).jobId === mine),
        10_000,
        10,
        'our socket to hear its event',
      );
      await new Promise((r) => setTimeout(r, 200));
    } finally {
      await nc.close();
    }
    const after = total((await scrape(sys.gateway)).samples, 'bns_gateway_socket_events_sent_total');
    // Counted: what reached a socket here, not the five that had nobody to go to.
    expect(after - before).toBe(anyHeard);
    expect(anyHeard).toBeGreaterThanOrEqual(1);
  });

  it('no label value is a user id, a job id, a phone number or a UUID', () => {
    const uuid = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/i;
    const phone = /(^|\D)(852)?\d{8,15}(\D|$)/;
    const offending: string[] = [];
    for (const [label, { text, samples }] of scrapes) {
      for (const s of samples) {
        for (const [k, v] of Object.entries(s.labels)) {
          if (uuid.test(v) || phone.test(v) || v.includes(userId) || v.includes('@'))
            offending.push(`${label}: ${s.name}{${k}="${v}"}`);
        }
      }
      // Names, HELP texts and labels, not the sample values: a float sum such as 0.19800000200000002
      // may hold any digits by chance.
      const words = text
        .split('\n')
        .map((line) => (line.startsWith('#') ? line : line.replace(/ [^ ]+( \d+)?$/, '')))
        .join('\n');
      for (const secret of [userId, jobId, ...PHONES])
        if (words.includes(secret)) offending.push(`${label}: contains ${secret}`);
    }
    expect(offending).toEqual([]);
  });
});
