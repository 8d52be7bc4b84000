import { Controller, Get, Param, Query, Res } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiOperation, ApiQuery, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import { RESULTS_LIMITS, RECIPIENT_RESULT_STATUSES } from '@bns/contracts';
import type { AuthUser } from '../auth/auth.types.js';
import { CurrentUser } from '../auth/current-user.decorator.js';
import { ResultsApi } from './results.api.js';
import { Audited, details } from '../audit/audited.js';

const RESULT_EXAMPLE = {
  phoneNumber: '91234567',
  variables: { name: 'Ann' },
  status: 'read',
  sentAt: '2025-01-01T00:00:04.000Z',
  deliveredAt: '2025-01-01T00:00:05.000Z',
  readAt: '2025-01-01T00:00:09.000Z',
  repliedAt: null,
};

/**
 * Campaign results: the per-recipient report, its export and the campaign history, all
 * owned by the jobs service. Each reads only the token's user's jobs; another user's job is 404.
 */
@ApiTags('jobs')
@ApiBearerAuth()
@Controller()
export class ResultsController {
  constructor(private readonly api: ResultsApi) {}

  @Get('job-results/:jobId')
  @ApiOperation({
    summary: `A page of the per-recipient report in list order (limit ≤ ${RESULTS_LIMITS.reportPageMax}); pass nextCursor as cursor for the next page`,
  })
  @ApiQuery({
    name: 'status',
    required: false,
    description: `one or more of ${RECIPIENT_RESULT_STATUSES.join(', ')}, comma-separated`,
  })
  @ApiQuery({
    name: 'q',
    required: false,
    description:
      'digits of a phone number (91234567, 85291234567 or part of one): only the recipients whose number holds them',
  })
  @ApiQuery({ name: 'cursor', required: false })
  @ApiQuery({ name: 'limit', required: false })
  @ApiOkResponse({ schema: { example: { success: true, results: [RESULT_EXAMPLE], nextCursor: '100' } } })
  results(@Param('jobId') jobId: string, @Query() query: Record<string, unknown>, @CurrentUser() user: AuthUser) {
    return this.api.results(user.userId, jobId, query);
  }

  @Get('api/jobs/:userId')
  @ApiOperation({
    summary:
      "The user's jobs, newest first, with counts, receipts and a message preview; pass nextCursor as cursor for more",
  })
  @ApiQuery({ name: 'cursor', required: false })
  @ApiQuery({ name: 'limit', required: false })
  @ApiQuery({
    name: 'active',
    required: false,
    description: 'true: only the jobs not finished yet (queued, scheduled, running, paused)',
  })
  history(@Query() query: Record<string, unknown>, @CurrentUser() user: AuthUser) {
    return this.api.history(user.userId, query);
  }

  /** Streams the whole report (ResultsApi.export): each chunk acknowledged once written out. */
  @Get('job-results/:jobId/export')
  @Audited('export.downloaded', (req) => details({ what: 'campaign report', campaignId: req.params.jobId }))
  @ApiOperation({ summary: 'Download the whole report: ?format=csv (default) or xlsx' })
  @ApiQuery({ name: 'format', required: false, enum: ['csv', 'xlsx'] })
  export(
    @Param('jobId') jobId: string,
    @Query() query: Record<string, unknown>,
    @CurrentUser() user: AuthUser,
    @Res() res: Response,
  ): Promise<void> {
    return this.api.export(user.userId, jobId, query, res);
  }
}
