import { Controller, Get, HttpCode, Inject, Post } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { SESSION_MESSAGES, SessionsErrorCode } from '@bns/contracts';
import { AppError, RpcClient, SERVICE_ENV } from '@bns/service-kit';
import { CurrentUser } from '../auth/current-user.decorator.js';
import type { AuthUser } from '../auth/auth.types.js';
import type { GatewayEnv } from '../config/env.js';

/**
 * Dev-only: the phone's side of the simulated WhatsApp engine, for local runs and tests. Every call
 * acts on the caller's own account and is 404 unless WA_ENGINE=simulated.
 */
@ApiTags('dev simulator')
@ApiBearerAuth()
@Controller('dev/simulator')
export class SimulatorController {
  constructor(
    private readonly rpc: RpcClient,
    @Inject(SERVICE_ENV) private readonly env: GatewayEnv,
  ) {}

  @Post('scan')
  @HttpCode(200)
  @ApiOperation({ summary: 'Scan the QR code showing for the caller: completes the pending link (simulated engine only)' })
  @ApiOkResponse({ schema: { example: { success: true, sessionId: 'uuid', phoneNumber: '85291234567' } } })
  async scan(@CurrentUser() user: AuthUser) {
    this.assertEnabled();
    return { success: true, ...(await this.rpc.call('sessions.simulator.scan', { userId: user.userId })) };
  }

  @Post('disconnect')
  @HttpCode(200)
  @ApiOperation({ summary: 'The phone unlinks this device (simulated engine only)' })
  async disconnect(@CurrentUser() user: AuthUser) {
    this.assertEnabled();
    return { success: true, ...(await this.rpc.call('sessions.simulator.disconnect', { userId: user.userId })) };
  }

  @Get('outbox')
  @ApiOperation({ summary: "What arrived on WhatsApp from the caller's account (simulated engine only)" })
  @ApiOkResponse({ schema: { example: { success: true, messages: [{ to: '85291234567', text: 'Hello', idempotencyKey: 'job:85291234567', at: '2025-01-01T00:00:00.000Z' }] } } })
  async outbox(@CurrentUser() user: AuthUser) {
    this.assertEnabled();
    return { success: true, ...(await this.rpc.call('sessions.simulator.outbox', { userId: user.userId })) };
  }

  private assertEnabled(): void {
    if (this.env.WA_ENGINE !== 'simulated') throw AppError.notFound(SessionsErrorCode.SimulatorDisabled, SESSION_MESSAGES.simulatorDisabled);
  }
}
