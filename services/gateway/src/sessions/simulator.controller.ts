import { Body, Controller, Get, HttpCode, Post } from '@nestjs/common';
import { ApiBearerAuth, ApiBody, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { RpcClient } from '@bns/service-kit';
import { CurrentUser } from '../auth/current-user.decorator.js';
import type { AuthUser } from '../auth/auth.types.js';

/**
 * Dev-only: the phone's side of the simulated WhatsApp engine, for local runs and tests. Every call
 * acts on the caller's own account. Mounted only with AUTH_MODE=dev and WA_ENGINE=simulated.
 */
@ApiTags('dev simulator')
@ApiBearerAuth()
@Controller('dev/simulator')
export class SimulatorController {
  constructor(private readonly rpc: RpcClient) {}

  @Post('scan')
  @HttpCode(200)
  @ApiOperation({ summary: 'Scan the QR code showing for the caller: completes the pending link (simulated engine only)' })
  @ApiOkResponse({ schema: { example: { success: true, sessionId: 'uuid', phoneNumber: '85291234567' } } })
  async scan(@CurrentUser() user: AuthUser) {
    return { success: true, ...(await this.rpc.call('sessions.simulator.scan', { userId: user.userId })) };
  }

  @Post('disconnect')
  @HttpCode(200)
  @ApiOperation({ summary: 'The phone unlinks this device (simulated engine only)' })
  async disconnect(@CurrentUser() user: AuthUser) {
    return { success: true, ...(await this.rpc.call('sessions.simulator.disconnect', { userId: user.userId })) };
  }

  @Post('inbound')
  @HttpCode(200)
  @ApiOperation({ summary: "The caller's simulated phone receives a message from `from` (simulated engine only); it arrives as events.message.received" })
  @ApiBody({ schema: { example: { from: '91234567', text: 'STOP' } } })
  @ApiOkResponse({ schema: { example: { success: true, messageId: 'sim-in-uuid', at: '2025-01-01T00:00:00.000Z' } } })
  async inbound(@CurrentUser() user: AuthUser, @Body() body: unknown) {
    const { from, text } = (body ?? {}) as { from?: unknown; text?: unknown };
    // The sessions service validates both and answers a validation error (400) for bad ones.
    return { success: true, ...(await this.rpc.call('sessions.simulator.inbound', { userId: user.userId, from: from as string, text: text as string })) };
  }

  @Get('outbox')
  @ApiOperation({ summary: "What arrived on WhatsApp from the caller's account (simulated engine only)" })
  @ApiOkResponse({ schema: { example: { success: true, messages: [{ to: '85291234567', text: 'Hello', idempotencyKey: 'job:85291234567', at: '2025-01-01T00:00:00.000Z' }] } } })
  async outbox(@CurrentUser() user: AuthUser) {
    return { success: true, ...(await this.rpc.call('sessions.simulator.outbox', { userId: user.userId })) };
  }
}
