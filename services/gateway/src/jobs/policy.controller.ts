import { Body, Controller, Get, HttpCode, Param, Post, Put } from '@nestjs/common';
import { ApiBearerAuth, ApiBody, ApiOkResponse, ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import { carefulPolicy, POLICY_EXPLANATIONS } from '@bns/contracts';
import type { AuthUser } from '../auth/auth.types.js';
import { CurrentUser } from '../auth/current-user.decorator.js';
import { JobsApi } from './jobs.api.js';
import { PolicyApi } from './policy.api.js';
import { Audited, details } from '../audit/audited.js';

const POLICY_EXAMPLE = carefulPolicy();

/**
 * The account's sending policy and pause/resume of a job, answered by the jobs service (which validates
 * and enforces them). The user is the token's subject: AuthGuard refused another user's path id (403),
 * and the jobs service answers another user's job as not found (404).
 */
@ApiTags('jobs')
@ApiBearerAuth()
@Controller()
export class PolicyController {
  constructor(
    private readonly policy: PolicyApi,
    private readonly jobs: JobsApi,
  ) {}

  @Get('api/sending-policy/:userId')
  @ApiOperation({ summary: 'The sending policy in force: gaps, pauses, daily cap, sending window, time zone, warm-up' })
  @ApiParam({ name: 'userId', description: "The signed-in user's id" })
  @ApiOkResponse({ schema: { example: { success: true, policy: POLICY_EXAMPLE } } })
  get(@CurrentUser() user: AuthUser, @Param('userId') _userId: string) {
    return this.policy.get(user.userId);
  }

  @Get('api/sends-today/:userId')
  @ApiOperation({
    summary:
      "Today's sends against the daily cap, and the messages to numbers that never replied: this month and the last 30 days, against the policy's unansweredLimit",
  })
  @ApiParam({ name: 'userId', description: "The signed-in user's id" })
  @ApiOkResponse({
    schema: {
      example: {
        success: true,
        today: {
          date: '2026-06-01',
          timeZone: 'Asia/Hong_Kong',
          sent: 42,
          cap: 300,
          remaining: 258,
          unanswered: { month: 120, last30Days: 150, limit: 200 },
        },
      },
    },
  })
  sendsToday(@CurrentUser() user: AuthUser, @Param('userId') _userId: string) {
    return this.policy.sendsToday(user.userId);
  }

  @Put('api/sending-policy/:userId')
  @Audited('policy.changed')
  @ApiOperation({
    summary: `Change the sending policy (partial). ${POLICY_EXPLANATIONS.careful} Any edit makes it custom; bad values answer 400 naming the field.`,
  })
  @ApiParam({ name: 'userId', description: "The signed-in user's id" })
  @ApiBody({ schema: { example: { preset: 'careful' } } })
  @ApiOkResponse({ schema: { example: { success: true, policy: POLICY_EXAMPLE } } })
  set(@CurrentUser() user: AuthUser, @Param('userId') _userId: string, @Body() body: unknown) {
    return this.policy.set(user.userId, body);
  }

  @Post('pause-job/:jobId')
  @Audited('campaign.paused', (req) => details({ campaignId: req.params.jobId }))
  @HttpCode(200)
  @ApiOperation({
    summary: 'Pause a queued, scheduled or running job; it keeps its place (409 when finished or already paused)',
  })
  pause(@Param('jobId') jobId: string, @CurrentUser() user: AuthUser) {
    return this.jobs.pause(user.userId, jobId);
  }

  @Post('resume-job/:jobId')
  @Audited('campaign.resumed', (req) => details({ campaignId: req.params.jobId }))
  @HttpCode(200)
  @ApiOperation({ summary: 'Resume a job you paused (409 when it is not paused by you)' })
  resume(@Param('jobId') jobId: string, @CurrentUser() user: AuthUser) {
    return this.jobs.resume(user.userId, jobId);
  }
}
