import {
  Body,
  Controller,
  Get,
  Header,
  Headers,
  HttpCode,
  Param,
  type PipeTransform,
  Post,
  Query,
  Res,
  UseInterceptors,
} from '@nestjs/common';
import { ApiBearerAuth, ApiHeader, ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import {
  IDEMPOTENCY_KEY_HEADER,
  JOB_HTTP,
  JOB_STATUS_CACHE_CONTROL,
  JobAnswerSchema,
  JobLogsAnswerSchema,
  JobLogsQuerySchema,
  JobPacingAnswerSchema,
  JobsErrorCode,
  StartJobAnswerSchema,
  StartJobBodySchema,
  StartJobHttpBodySchema,
  RESULTS_LIMITS,
  startJobErrorCode,
  type Infer,
  type StartJobFields,
} from '@bns/contracts';
import { AppError } from '@bns/service-kit';
import { CurrentUser } from '../auth/current-user.decorator.js';
import { SegmentStartInterceptor } from '../contacts/segment-start.interceptor.js';
import type { AuthUser } from '../auth/auth.types.js';
import { BodyRule } from '../http/body-size.js';
import { ApiSchemaBody, ApiSchemaOk, ApiSchemaQuery } from '../http/openapi.js';
import { SchemaPipe } from '../http/schema.pipe.js';
import { JobStatusService } from '../job-status-fast-path/index.js';
import { JobsApi } from './jobs.api.js';
import { Audited, details } from '../audit/audited.js';

/** The start body's shape, checked here with the same codes and words the jobs service answers. */
const startSchema = new SchemaPipe(StartJobHttpBodySchema, (r) =>
  AppError.validation(startJobErrorCode(r.field, r.message), r.message),
);
/** Entries in a body's recipient lists (0 for anything that is not one: the schema refuses it). */
const entries = (body: unknown): number => {
  const { recipients, phoneNumbers } = (typeof body === 'object' && body !== null ? body : {}) as StartJobFields;
  return (Array.isArray(recipients) ? recipients.length : 0) + (Array.isArray(phoneNumbers) ? phoneNumbers.length : 0);
};
/**
 * A start body, checked here unless its lists are long (RESULTS_LIMITS.gatewayCheckMaxEntries): the
 * jobs service checks every start with the same schema and words, so a long list is walked there only.
 */
const startBody = {
  transform: (body: unknown): StartJobFields =>
    entries(body) > RESULTS_LIMITS.gatewayCheckMaxEntries ? (body as StartJobFields) : startSchema.transform(body),
} satisfies PipeTransform<unknown, StartJobFields>;
const logsQuery = new SchemaPipe(JobLogsQuerySchema, (r) => AppError.validation(JobsErrorCode.InvalidSince, r.message));

/**
 * The bulk-send calls of SPEC §7. The paths carry no user id: the job belongs to the token's user,
 * and a body `clerkUserId` has already been checked against it by the AuthGuard.
 */
@ApiTags('jobs')
@ApiBearerAuth()
@Controller()
export class JobsController {
  constructor(
    private readonly jobs: JobsApi,
    private readonly jobStatus: JobStatusService,
  ) {}

  @Post('start-bulk-messages')
  @Audited('campaign.started', (_req, r) => details({ campaignId: (r as { jobId?: unknown }).jobId }))
  @HttpCode(200)
  @BodyRule(JOB_HTTP.start)
  // A segmentId becomes the segment's recipients, and {{var|fallback}} is filled, before the body is checked.
  @UseInterceptors(SegmentStartInterceptor)
  @ApiOperation({
    summary:
      'Start a bulk send: phoneNumbers (8-digit Hong Kong numbers, 852/+852 stripped, duplicates merged) or personalised recipients [{phone, variables}] filling {{placeholders}}',
  })
  @ApiSchemaBody(StartJobBodySchema)
  @ApiSchemaOk(StartJobAnswerSchema)
  start(
    @Body(startBody) body: StartJobFields,
    @CurrentUser() user: AuthUser,
    @Headers(IDEMPOTENCY_KEY_HEADER) key: unknown,
  ) {
    return this.jobs.start(user.userId, body, key);
  }

  @Get('api/jobs/pacing')
  @ApiOperation({
    summary:
      'The delay between two messages the jobs service uses (ms), so an estimate shown before a start matches its own',
  })
  @ApiSchemaOk(JobPacingAnswerSchema)
  pacing(@CurrentUser() user: AuthUser) {
    return this.jobs.pacing(user.userId);
  }

  @Get('job-status/:jobId')
  // Pollers revalidate (JobStatusService); the front door answers what it can before Express (job-status-fast-path/).
  @Header('Cache-Control', JOB_STATUS_CACHE_CONTROL)
  @ApiOperation({
    summary:
      "A job's status, counts, result lists (newest 2000 of each), error, estimate and next send time; 304 when If-None-Match names its current ETag",
  })
  @ApiHeader({ name: 'If-None-Match', required: false, description: 'The ETag of a copy the client has' })
  @ApiSchemaOk(JobAnswerSchema)
  @ApiResponse({ status: 304, description: 'The copy named by If-None-Match is current (no body)' })
  status(
    @Param('jobId') jobId: string,
    @CurrentUser() user: AuthUser,
    @Headers('if-none-match') ifNoneMatch: unknown,
    @Res() res: Response,
  ): Promise<void> {
    return this.jobStatus.answer(user.userId, jobId, ifNoneMatch, res);
  }

  @Get('job-logs/:jobId')
  @ApiOperation({
    summary: 'Log entries strictly after `since` (ISO time or epoch ms), oldest first, up to 500 per call',
  })
  @ApiSchemaQuery(JobLogsQuerySchema)
  @ApiSchemaOk(JobLogsAnswerSchema)
  logs(
    @Param('jobId') jobId: string,
    @Query(logsQuery) query: Infer<typeof JobLogsQuerySchema>,
    @CurrentUser() user: AuthUser,
  ) {
    return this.jobs.logs(user.userId, jobId, query);
  }

  @Post('cancel-job/:jobId')
  @Audited('campaign.cancelled', (req) => details({ campaignId: req.params.jobId }))
  @HttpCode(200)
  @ApiOperation({ summary: 'Cancel a queued or running job before its next send' })
  @ApiSchemaOk(JobAnswerSchema)
  cancel(@Param('jobId') jobId: string, @CurrentUser() user: AuthUser) {
    return this.jobs.cancel(user.userId, jobId);
  }
}
