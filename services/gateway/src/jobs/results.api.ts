import { once } from 'node:events';
import { Inject, Injectable, Logger } from '@nestjs/common';
import type { Response } from 'express';
import { createInbox, type NatsConnection, type Subscription } from '@nats-io/transport-node';
import {
  EXPORT_ACK,
  EXPORT_STREAM_HEADERS,
  firstIssue,
  jobExportQuerySchema,
  jobHistoryQuerySchema,
  JobResultsErrorCode,
  jobResultsQuerySchema,
  RESULTS_LIMITS,
} from '@bns/contracts';
import { AppError, NATS_CONNECTION, RpcClient } from '@bns/service-kit';

function parsed<T>(
  result: { success: true; data: T } | { success: false; error: Parameters<typeof firstIssue>[0] },
): T {
  if (!result.success) throw AppError.validation(JobResultsErrorCode.InvalidQuery, firstIssue(result.error));
  return result.data;
}

/**
 * Campaign results: the per-recipient report, its export and the campaign history, all owned by the
 * jobs service. Each reads only the user's jobs; another user's job is 404.
 */
@Injectable()
export class ResultsApi {
  private readonly logger = new Logger('ResultsController');

  constructor(
    private readonly rpc: RpcClient,
    @Inject(NATS_CONNECTION) private readonly nc: NatsConnection,
  ) {}

  async results(userId: string, jobId: string, query: Record<string, unknown>) {
    const q = parsed(jobResultsQuerySchema.safeParse(query));
    const page = await this.rpc.call('jobs.results', { userId, jobId, ...q });
    return { success: true, ...page };
  }

  async history(userId: string, query: Record<string, unknown>) {
    const q = parsed(jobHistoryQuerySchema.safeParse(query));
    const page = await this.rpc.call('jobs.list', { userId, ...q });
    return { success: true, ...page };
  }

  /**
   * Streams the whole report as CSV or XLSX. The jobs service sends the file in chunks to an inbox of
   * this request; each chunk is acknowledged only once it is written out (after `drain` when the
   * client reads slowly), so neither side holds more than a chunk or two, whatever the job's size.
   */
  async export(userId: string, jobId: string, query: Record<string, unknown>, res: Response): Promise<void> {
    const { format, tz } = parsed(jobExportQuerySchema.safeParse(query));
    const inbox = createInbox();
    const sub = this.nc.subscribe(inbox);
    let start;
    try {
      start = await this.rpc.call('jobs.export', { userId, jobId, format, tz, inbox });
    } catch (err) {
      sub.unsubscribe();
      throw err;
    }
    res.setHeader('Content-Type', start.contentType);
    res.setHeader('Content-Disposition', `attachment; filename="${start.filename}"`);
    res.setHeader('Cache-Control', 'no-store');
    await this.pipe(sub, res);
  }

  private async pipe(sub: Subscription, res: Response): Promise<void> {
    let gone = false;
    res.on('close', () => (gone = true));
    // Nothing for twice the ack time: the exporter died; cut the answer short rather than hang.
    let idle: NodeJS.Timeout | undefined;
    const arm = () => {
      clearTimeout(idle);
      idle = setTimeout(() => sub.unsubscribe(), RESULTS_LIMITS.exportAckTimeoutMs * 2);
    };
    arm();
    let complete = false;
    try {
      for await (const m of sub) {
        arm();
        if (m.headers?.has(EXPORT_STREAM_HEADERS.error)) break;
        if (m.headers?.has(EXPORT_STREAM_HEADERS.end)) {
          complete = true;
          m.respond(EXPORT_ACK.ok);
          break;
        }
        if (!gone && !res.write(m.data)) await Promise.race([once(res, 'drain'), once(res, 'close')]);
        m.respond(gone ? EXPORT_ACK.stop : EXPORT_ACK.ok);
        if (gone) break;
      }
    } finally {
      clearTimeout(idle);
      sub.unsubscribe();
    }
    if (complete) res.end();
    else {
      this.logger.warn('export cut short');
      res.destroy();
    }
  }
}
