import { once } from 'node:events';
import { Controller, Get, Inject, Logger, Param, Query, Res } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiOperation, ApiQuery, ApiTags } from '@nestjs/swagger';
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
  RECIPIENT_RESULT_STATUSES,
} from '@bns/contracts';
import { AppError, NATS_CONNECTION, RpcClient } from '@bns/service-kit';
import type { AuthUser } from '../auth/auth.types.js';
import { CurrentUser } from '../auth/current-user.decorator.js';

const RESULT_EXAMPLE = {
  phoneNumber: '91234567',
  variables: { name: 'Ann' },
  status: 'read',
  sentAt: '2025-01-01T00:00:04.000Z',
  deliveredAt: '2025-01-01T00:00:05.000Z',
  readAt: '2025-01-01T00:00:09.000Z',
  repliedAt: null,
};

function parsed<T>(result: { success: true; data: T } | { success: false; error: Parameters<typeof firstIssue>[0] }): T {
  if (!result.success) throw AppError.validation(JobResultsErrorCode.InvalidQuery, firstIssue(result.error));
  return result.data;
}

/**
 * Campaign results: the per-recipient report, its export and the campaign history, all
 * owned by the jobs service. Each reads only the token's user's jobs; another user's job is 404.
 */
@ApiTags('jobs')
@ApiBearerAuth()
@Controller()
export class ResultsController {
  private readonly logger = new Logger('ResultsController');

  constructor(
    private readonly rpc: RpcClient,
    @Inject(NATS_CONNECTION) private readonly nc: NatsConnection,
  ) {}

  @Get('job-results/:jobId')
  @ApiOperation({
    summary: `A page of the per-recipient report in list order (limit ≤ ${RESULTS_LIMITS.reportPageMax}); pass nextCursor as cursor for the next page`,
  })
  @ApiQuery({ name: 'status', required: false, description: `one or more of ${RECIPIENT_RESULT_STATUSES.join(', ')}, comma-separated` })
  @ApiQuery({ name: 'cursor', required: false })
  @ApiQuery({ name: 'limit', required: false })
  @ApiOkResponse({ schema: { example: { success: true, results: [RESULT_EXAMPLE], nextCursor: '100' } } })
  async results(@Param('jobId') jobId: string, @Query() query: Record<string, unknown>, @CurrentUser() user: AuthUser) {
    const q = parsed(jobResultsQuerySchema.safeParse(query));
    const page = await this.rpc.call('jobs.results', { userId: user.userId, jobId, ...q });
    return { success: true, ...page };
  }

  @Get('api/jobs/:userId')
  @ApiOperation({ summary: "The user's jobs, newest first, with counts, receipts and a message preview; pass nextCursor as cursor for more" })
  @ApiQuery({ name: 'cursor', required: false })
  @ApiQuery({ name: 'limit', required: false })
  @ApiQuery({ name: 'active', required: false, description: 'true: only the jobs not finished yet (queued, scheduled, running, paused)' })
  async history(@Query() query: Record<string, unknown>, @CurrentUser() user: AuthUser) {
    const q = parsed(jobHistoryQuerySchema.safeParse(query));
    const page = await this.rpc.call('jobs.list', { userId: user.userId, ...q });
    return { success: true, ...page };
  }

  /**
   * Streams the whole report as CSV or XLSX. The jobs service sends the file in chunks to an inbox of
   * this request; each chunk is acknowledged only once it is written out (after `drain` when the
   * client reads slowly), so neither side holds more than a chunk or two, whatever the job's size.
   */
  @Get('job-results/:jobId/export')
  @ApiOperation({ summary: 'Download the whole report: ?format=csv (default) or xlsx' })
  @ApiQuery({ name: 'format', required: false, enum: ['csv', 'xlsx'] })
  async export(@Param('jobId') jobId: string, @Query() query: Record<string, unknown>, @CurrentUser() user: AuthUser, @Res() res: Response) {
    const { format } = parsed(jobExportQuerySchema.safeParse(query));
    const inbox = createInbox();
    const sub = this.nc.subscribe(inbox);
    let start;
    try {
      start = await this.rpc.call('jobs.export', { userId: user.userId, jobId, format, inbox });
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
