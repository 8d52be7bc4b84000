import { Body, Controller, Get, Header, Headers, HttpCode, Param, Post, Query, Res } from '@nestjs/common';
import { ApiBearerAuth, ApiHeader, ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import {
  ErrorKind,
  IDEMPOTENCY_KEY_HEADER,
  ifNoneMatchVersions,
  JOB_HTTP,
  JOB_STATUS_CACHE_CONTROL,
  JobAnswerSchema,
  JobLogsAnswerSchema,
  JobLogsQuerySchema,
  JobPacingAnswerSchema,
  JobsErrorCode,
  jobStatusEtag,
  parseSince,
  StartJobAnswerSchema,
  StartJobBodySchema,
  StartJobHttpBodySchema,
  startJobErrorCode,
  type Infer,
} from '@bns/contracts';
import { AppError, RpcClient } from '@bns/service-kit';
import { CurrentUser } from '../auth/current-user.decorator.js';
import type { AuthUser } from '../auth/auth.types.js';
import { BodyRule } from '../http/body-size.js';
import { ApiSchemaBody, ApiSchemaOk, ApiSchemaQuery } from '../http/openapi.js';
import { SchemaPipe } from '../http/schema.pipe.js';
import { countRevalidation } from '../metrics/gateway.metrics.js';
import { JobIdCheck, jobNotFound } from './job-id-check.js';
import { JobStarter } from './job-starter.js';
import { JobStatusCache } from './job-status-cache.js';

/** The start body's shape, checked here with the same codes and words the jobs service answers. */
const startBody = new SchemaPipe(StartJobHttpBodySchema, (r) => AppError.validation(startJobErrorCode(r.field, r.message), r.message));
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
    private readonly rpc: RpcClient,
    private readonly starter: JobStarter,
    private readonly statusCache: JobStatusCache,
    private readonly ids: JobIdCheck,
  ) {}

  @Post('start-bulk-messages')
  @HttpCode(200)
  @BodyRule(JOB_HTTP.start)
  @ApiOperation({
    summary: 'Start a bulk send: phoneNumbers (8-digit Hong Kong numbers, 852/+852 stripped, duplicates merged) or personalised recipients [{phone, variables}] filling {{placeholders}}',
  })
  @ApiSchemaBody(StartJobBodySchema)
  @ApiSchemaOk(StartJobAnswerSchema)
  async start(
    @Body(startBody) body: Infer<typeof StartJobHttpBodySchema>,
    @CurrentUser() user: AuthUser,
    @Headers(IDEMPOTENCY_KEY_HEADER) key: unknown,
  ) {
    const { message, phoneNumbers, recipients, clientId, startAt } = body;
    const request = { userId: user.userId, message, phoneNumbers, recipients, clientId, ...(startAt ? { startAt } : {}) };
    // The idempotency key, staging of big bodies and retries are the starter's.
    const { jobId, estimatedTime } = await this.starter.start(request, JobStarter.keyOf(key));
    return { success: true, jobId, estimatedTime };
  }

  @Get('api/jobs/pacing')
  @ApiOperation({ summary: 'The delay between two messages the jobs service uses (ms), so an estimate shown before a start matches its own' })
  @ApiSchemaOk(JobPacingAnswerSchema)
  async pacing(@CurrentUser() user: AuthUser) {
    return { success: true, ...(await this.rpc.call('jobs.pacing', { userId: user.userId })) };
  }

  @Get('job-status/:jobId')
  // Pollers revalidate: the jobs service versions the answer, and an If-None-Match naming the
  // current version is a 304 — from this replica's memory while nothing of the user was heard since
  // (JobStatusCache), else after one indexed read there, without the lists crossing NATS.
  @Header('Cache-Control', JOB_STATUS_CACHE_CONTROL)
  @ApiOperation({ summary: "A job's status, counts, result lists (newest 2000 of each), error, estimate and next send time; 304 when If-None-Match names its current ETag" })
  @ApiHeader({ name: 'If-None-Match', required: false, description: 'The ETag of a copy the client has' })
  @ApiSchemaOk(JobAnswerSchema)
  @ApiResponse({ status: 304, description: 'The copy named by If-None-Match is current (no body)' })
  async status(@Param('jobId') jobId: string, @CurrentUser() user: AuthUser, @Headers('if-none-match') ifNoneMatch: unknown, @Res() res: Response): Promise<void> {
    // An id that names no job of this user, or a job the jobs service lately said they do not have: the same 404, from here.
    this.ids.check(user.userId, jobId);
    if (this.statusCache.missing(user.userId, jobId)) throw jobNotFound();
    const versions = ifNoneMatchVersions(ifNoneMatch);
    if (versions) {
      const known = this.statusCache.version(user.userId, jobId);
      if (known !== undefined && versions.some((v) => v === '*' || v === known)) {
        countRevalidation('memory');
        res.setHeader('ETag', jobStatusEtag(known));
        res.status(304).end();
        return;
      }
      countRevalidation('jobs');
    }
    const ticket = this.statusCache.ticket(user.userId);
    const answer = await this.rpc.call('jobs.status', { userId: user.userId, jobId, ...(versions ? { ifNoneMatch: versions } : {}) }).catch((err: unknown) => {
      if (err instanceof AppError && err.kind === ErrorKind.NotFound && err.code === JobsErrorCode.NotFound) this.statusCache.rememberMissing(user.userId, jobId, ticket);
      throw err;
    });
    this.statusCache.remember(user.userId, jobId, answer.version, ticket);
    // The jobs service decided: not res.send, which would hash the body for an ETag of its own when
    // none were set, and turn a 200 into a 304 by its own reading of If-None-Match (`req.fresh`).
    res.setHeader('ETag', jobStatusEtag(answer.version));
    if ('notModified' in answer) {
      res.status(304).end();
      return;
    }
    res.setHeader('Content-Type', 'application/json; charset=utf-8');
    res.end(`{"success":true,"job":${answer.jobJson}}`);
  }

  @Get('job-logs/:jobId')
  @ApiOperation({ summary: 'Log entries strictly after `since` (ISO time or epoch ms), oldest first, up to 500 per call' })
  @ApiSchemaQuery(JobLogsQuerySchema)
  @ApiSchemaOk(JobLogsAnswerSchema)
  async logs(@Param('jobId') jobId: string, @Query(logsQuery) query: Infer<typeof JobLogsQuerySchema>, @CurrentUser() user: AuthUser) {
    // A bad `since` is the jobs service's to refuse first, as it would.
    if (parseSince(query.since) !== null) this.ids.check(user.userId, jobId);
    const { logs } = await this.rpc.call('jobs.logs', { userId: user.userId, jobId, ...(query.since !== undefined ? { since: query.since } : {}) });
    return { success: true, logs };
  }

  @Post('cancel-job/:jobId')
  @HttpCode(200)
  @ApiOperation({ summary: 'Cancel a queued or running job before its next send' })
  @ApiSchemaOk(JobAnswerSchema)
  async cancel(@Param('jobId') jobId: string, @CurrentUser() user: AuthUser) {
    this.ids.check(user.userId, jobId);
    const { job } = await this.statusCache.changing(user.userId, this.rpc.call('jobs.cancel', { userId: user.userId, jobId }));
    return { success: true, job };
  }
}
