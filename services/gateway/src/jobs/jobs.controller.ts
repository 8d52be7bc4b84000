import { Body, Controller, Get, HttpCode, Inject, Param, Post, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiBody, ApiOkResponse, ApiOperation, ApiQuery, ApiTags } from '@nestjs/swagger';
import type { NatsConnection } from '@nats-io/transport-node';
import { CommonErrorCode, ErrorKind, MESSAGES, type StartJobBody } from '@bns/contracts';
import { AppError, NATS_CONNECTION, RpcClient } from '@bns/service-kit';
import { CurrentUser } from '../auth/current-user.decorator.js';
import type { AuthUser } from '../auth/auth.types.js';

/** Room left in a NATS message for the request envelope around the body. */
const ENVELOPE_BYTES = 4096;

const JOB_EXAMPLE = {
  jobId: '3f0c…',
  status: 'running',
  progress: { total: 3, sent: 1, failed: 1 },
  results: {
    successList: [{ originalNumber: '91234567', timestamp: '2025-01-01T00:00:04.000Z' }],
    failedList: [{ phoneNumber: '61234567', timestamp: '2025-01-01T00:00:08.000Z', error: 'number is not on WhatsApp' }],
  },
  error: null,
  estimatedTime: 1,
  nextSendAt: '2025-01-01T00:00:12.000Z',
};

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
    @Inject(NATS_CONNECTION) private readonly nc: NatsConnection,
  ) {}

  @Post('start-bulk-messages')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Start a bulk send: phoneNumbers (8-digit Hong Kong numbers, 852/+852 stripped, duplicates merged) or personalised recipients [{phone, variables}] filling {{placeholders}}',
  })
  @ApiBody({
    schema: {
      example: { message: 'Hi {{name}}', recipients: [{ phone: '91234567', variables: { name: 'Ann' } }], clientId: 'socket-id', clerkUserId: 'user_…' },
    },
  })
  @ApiOkResponse({ schema: { example: { success: true, jobId: '3f0c…', estimatedTime: 7 } } })
  async start(@Body() body: Partial<StartJobBody> | undefined, @CurrentUser() user: AuthUser) {
    const request = { userId: user.userId, message: body?.message, phoneNumbers: body?.phoneNumbers, recipients: body?.recipients, clientId: body?.clientId };
    this.assertFitsOneMessage(request);
    const { jobId, estimatedTime } = await this.rpc.call('jobs.start', request);
    return { success: true, jobId, estimatedTime };
  }

  @Get('job-status/:jobId')
  @ApiOperation({ summary: "A job's status, counts, result lists (newest 2000 of each), error, estimate and next send time" })
  @ApiOkResponse({ schema: { example: { success: true, job: JOB_EXAMPLE } } })
  async status(@Param('jobId') jobId: string, @CurrentUser() user: AuthUser) {
    const { job } = await this.rpc.call('jobs.status', { userId: user.userId, jobId });
    return { success: true, job };
  }

  @Get('job-logs/:jobId')
  @ApiOperation({ summary: 'Log entries strictly after `since` (ISO time or epoch ms), oldest first, up to 500 per call' })
  @ApiQuery({ name: 'since', required: false })
  @ApiOkResponse({ schema: { example: { success: true, logs: [{ type: 'success', message: 'Message sent to 91234567', timestamp: '2025-01-01T00:00:04.000Z' }] } } })
  async logs(@Param('jobId') jobId: string, @Query('since') since: unknown, @CurrentUser() user: AuthUser) {
    const { logs } = await this.rpc.call('jobs.logs', { userId: user.userId, jobId, ...(typeof since === 'string' ? { since } : {}) });
    return { success: true, logs };
  }

  @Post('cancel-job/:jobId')
  @HttpCode(200)
  @ApiOperation({ summary: 'Cancel a queued or running job before its next send' })
  @ApiOkResponse({ schema: { example: { success: true, job: { ...JOB_EXAMPLE, status: 'cancelled', nextSendAt: null } } } })
  async cancel(@Param('jobId') jobId: string, @CurrentUser() user: AuthUser) {
    const { job } = await this.rpc.call('jobs.cancel', { userId: user.userId, jobId });
    return { success: true, job };
  }

  /** A body the HTTP limit lets in can still be too big for one NATS message: say so, not "unavailable". */
  private assertFitsOneMessage(request: object): void {
    const max = this.nc.info?.max_payload;
    if (max === undefined) return;
    if (Buffer.byteLength(JSON.stringify(request)) + ENVELOPE_BYTES > max) {
      throw new AppError(ErrorKind.PayloadTooLarge, CommonErrorCode.PayloadTooLarge, MESSAGES.payloadTooLarge, { details: { maxBytes: max - ENVELOPE_BYTES } });
    }
  }
}
