import { createServer, type Server } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { counter } from '../metrics.js';
import { MetricsEndpoint } from '../metrics-server.js';

describe('MetricsEndpoint: Prometheus metrics on a port of their own', () => {
  let endpoint: MetricsEndpoint;
  let url = '';

  beforeAll(async () => {
    counter({ name: 'bns_metrics_endpoint_spec_total', help: 'a counter of this spec' }).inc(3);
    endpoint = await MetricsEndpoint.listen(0, '127.0.0.1');
    url = `http://127.0.0.1:${endpoint.port}`;
  });
  afterAll(() => endpoint.close());

  it('serves the registry at /metrics in the Prometheus text format, never cached', async () => {
    expect(endpoint.port).toBeGreaterThan(0);
    const res = await fetch(`${url}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(await res.text()).toMatch(/^bns_metrics_endpoint_spec_total 3$/m);
    expect((await fetch(`${url}/metrics?x=1`)).status).toBe(200);
  });

  it('serves nothing else: another path is a 404, another method a 405', async () => {
    for (const path of ['/', '/healthz', '/metricsx', '/api/templates']) {
      const res = await fetch(`${url}${path}`);
      expect({ path, status: res.status }).toEqual({ path, status: 404 });
      await res.arrayBuffer();
    }
    const post = await fetch(`${url}/metrics`, { method: 'POST', body: 'x' });
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toBe('GET, HEAD');
  });

  it('a taken port refuses the start with a message naming METRICS_PORT', async () => {
    const taken: Server = createServer();
    await new Promise<void>((r) => taken.listen(0, '127.0.0.1', () => r()));
    const port = (taken.address() as { port: number }).port;
    try {
      await expect(MetricsEndpoint.listen(port, '127.0.0.1')).rejects.toThrow(
        new RegExp(`metrics port ${port} \\(METRICS_PORT\\): .*EADDRINUSE`),
      );
    } finally {
      taken.close();
    }
  });
});
