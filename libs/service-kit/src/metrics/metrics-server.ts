import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { OnApplicationShutdown } from '@nestjs/common';
import { metricsRegistry } from './metrics.js';

/**
 * Prometheus's endpoint on a port of its own (METRICS_PORT), apart from the service's HTTP port: the
 * gateway's HTTP port is the public API, and whatever reaches it must not read the process's internals.
 * A bare Node server, not a Nest route: no guard, body parser, rate limit or load shedder stands between
 * the scraper and the registry, and a scrape never counts as an HTTP request of the API.
 */
export class MetricsEndpoint implements OnApplicationShutdown {
  private constructor(
    private readonly server: Server,
    /** The port it listens on (the one the system picked when METRICS_PORT is 0). */
    readonly port: number,
  ) {}

  /** Listens on `port` (0: a free one) at `host` (undefined: every address); rejects when it cannot. */
  static async listen(port: number, host: string | undefined): Promise<MetricsEndpoint> {
    const server = createServer((req, res) => {
      const path = (req.url ?? '/').split('?')[0];
      if (path !== '/metrics') {
        res
          .writeHead(404, { 'content-type': 'text/plain; charset=utf-8' })
          .end('Not found: this port serves /metrics only.\n');
        return;
      }
      if (req.method !== 'GET' && req.method !== 'HEAD') {
        res
          .writeHead(405, { allow: 'GET, HEAD', 'content-type': 'text/plain; charset=utf-8' })
          .end('Method not allowed: use GET.\n');
        return;
      }
      metricsRegistry.metrics().then(
        (text) => {
          res.writeHead(200, { 'content-type': metricsRegistry.contentType, 'cache-control': 'no-store' });
          res.end(req.method === 'HEAD' ? undefined : text);
        },
        () => {
          // A gauge's collect() failed (each logs its own cause); the scrape shows as failed, not empty.
          res
            .writeHead(500, { 'content-type': 'text/plain; charset=utf-8' })
            .end('Collecting the metrics failed: see the service log.\n');
        },
      );
    });
    // Prometheus keeps its connection open between scrapes (15–60 s apart).
    server.keepAliveTimeout = 120_000;
    await new Promise<void>((resolve, reject) => {
      server.once('error', (err) =>
        reject(new Error(`metrics port ${port} (METRICS_PORT): ${err.message}`, { cause: err })),
      );
      server.listen(port, host, () => resolve());
    });
    return new MetricsEndpoint(server, (server.address() as AddressInfo).port);
  }

  close(): Promise<void> {
    return new Promise((resolve) => {
      this.server.close(() => resolve());
      this.server.closeAllConnections();
    });
  }

  async onApplicationShutdown(): Promise<void> {
    await this.close();
  }
}
