import { Body, Controller, Get, HttpCode, Post } from '@nestjs/common';
import { ApiBearerAuth, ApiBody, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { CurrentUser } from '../auth/current-user.decorator.js';
import type { AuthUser } from '../auth/auth.types.js';
import { SimulatorApi } from './sessions.api.js';

/**
 * Dev-only: the phone's side of the simulated WhatsApp engine, for local runs and tests. Every call
 * acts on the caller's own account. Mounted only with AUTH_MODE=dev and WA_ENGINE=simulated.
 */
@ApiTags('dev simulator')
@ApiBearerAuth()
@Controller('dev/simulator')
export class SimulatorController {
  constructor(private readonly api: SimulatorApi) {}

  @Post('scan')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Scan the QR code showing for the caller: completes the pending link (simulated engine only)',
  })
  @ApiOkResponse({ schema: { example: { success: true, sessionId: 'uuid', phoneNumber: '85291234567' } } })
  scan(@CurrentUser() user: AuthUser) {
    return this.api.scan(user.userId);
  }

  @Post('pair')
  @HttpCode(200)
  @ApiOperation({
    summary:
      'Enter the pairing code showing for the caller on the simulated phone: completes a link by phone number (simulated engine only)',
  })
  @ApiBody({ schema: { example: { code: 'ABCD-EFGH' } } })
  @ApiOkResponse({ schema: { example: { success: true, sessionId: 'uuid', phoneNumber: '85291234567' } } })
  pair(@CurrentUser() user: AuthUser, @Body() body: unknown) {
    return this.api.pair(user.userId, body);
  }

  @Post('disconnect')
  @HttpCode(200)
  @ApiOperation({ summary: 'The phone unlinks this device (simulated engine only)' })
  disconnect(@CurrentUser() user: AuthUser) {
    return this.api.disconnect(user.userId);
  }

  @Post('inbound')
  @HttpCode(200)
  @ApiOperation({
    summary:
      "The caller's simulated phone receives a message from `from` (simulated engine only); it arrives as events.message.received",
  })
  @ApiBody({ schema: { example: { from: '91234567', text: 'STOP' } } })
  @ApiOkResponse({ schema: { example: { success: true, messageId: 'sim-in-uuid', at: '2025-01-01T00:00:00.000Z' } } })
  inbound(@CurrentUser() user: AuthUser, @Body() body: unknown) {
    return this.api.inbound(user.userId, body);
  }

  @Get('outbox')
  @ApiOperation({ summary: "What arrived on WhatsApp from the caller's account (simulated engine only)" })
  @ApiOkResponse({
    schema: {
      example: {
        success: true,
        messages: [
          { to: '85291234567', text: 'Hello', idempotencyKey: 'job:85291234567', at: '2025-01-01T00:00:00.000Z' },
        ],
      },
    },
  })
  outbox(@CurrentUser() user: AuthUser) {
    return this.api.outbox(user.userId);
  }
}
