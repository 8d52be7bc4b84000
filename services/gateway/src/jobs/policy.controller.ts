import { Body, Controller, Get, HttpCode, Param, Post, Put } from '@nestjs/common';
import { ApiBearerAuth, ApiBody, ApiOkResponse, ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import { carefulPolicy, POLICY_EXPLANATIONS } from '@bns/contracts';
import { RpcClient } from '@bns/service-kit';
import type { AuthUser } from '../auth/auth.types.js';
import { CurrentUser } from '../auth/current-user.decorator.js';
import { JobIdCheck } from './job-id-check.js';
import { JobStatusCache } from './job-status-cache.js';

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
    private readonly rpc: RpcClient,
    private readonly statusCache: JobStatusCache,
    private readonly ids: JobIdCheck,
  ) {}

  @Get('api/sending-policy/:userId')
  @ApiOperation({ summary: 'The sending policy in force: gaps, pauses, daily cap, sending window, time zone, warm-up' })
  @ApiParam({ name: 'userId', description: "The signed-in user's id" })
  @ApiOkResponse({ schema: { example: { success: true, policy: POLICY_EXAMPLE } } })
  async get(@CurrentUser() user: AuthUser, @Param('userId') _userId: string) {
    const { policy } = await this.rpc.call('jobs.policy.get', { userId: user.userId });
    return { success: true, policy };
  }

  @Put('api/sending-policy/:userId')
  @ApiOperation({ summary: `Change the sending policy (partial). ${POLICY_EXPLANATIONS.careful} Any edit makes it custom; bad values answer 400 naming the field.` })
  @ApiParam({ name: 'userId', description: "The signed-in user's id" })
  @ApiBody({ schema: { example: { preset: 'careful' } } })
  @ApiOkResponse({ schema: { example: { success: true, policy: POLICY_EXAMPLE } } })
  async set(@CurrentUser() user: AuthUser, @Param('userId') _userId: string, @Body() body: unknown) {
    // clerkUserId, when the client sends it, is who acts (AuthGuard checked it), not a policy setting.
    const update = typeof body === 'object' && body !== null && !Array.isArray(body) ? { ...(body as Record<string, unknown>) } : body;
    if (typeof update === 'object' && update !== null) delete (update as Record<string, unknown>).clerkUserId;
    const { policy } = await this.rpc.call('jobs.policy.set', { userId: user.userId, policy: update ?? {} });
    return { success: true, policy };
  }

  @Post('pause-job/:jobId')
  @HttpCode(200)
  @ApiOperation({ summary: 'Pause a queued, scheduled or running job; it keeps its place (409 when finished or already paused)' })
  async pause(@Param('jobId') jobId: string, @CurrentUser() user: AuthUser) {
    this.ids.check(user.userId, jobId);
    const { job } = await this.statusCache.changing(user.userId, this.rpc.call('jobs.pause', { userId: user.userId, jobId }));
    return { success: true, job };
  }

  @Post('resume-job/:jobId')
  @HttpCode(200)
  @ApiOperation({ summary: 'Resume a job you paused (409 when it is not paused by you)' })
  async resume(@Param('jobId') jobId: string, @CurrentUser() user: AuthUser) {
    this.ids.check(user.userId, jobId);
    const { job } = await this.statusCache.changing(user.userId, this.rpc.call('jobs.resume', { userId: user.userId, jobId }));
    return { success: true, job };
  }
}
