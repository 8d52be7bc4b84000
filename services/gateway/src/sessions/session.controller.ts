import { Body, Controller, HttpCode, Post } from '@nestjs/common';
import { ApiBearerAuth, ApiBody, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { SESSION_MESSAGES, SessionsErrorCode } from '@bns/contracts';
import { AppError, RpcClient } from '@bns/service-kit';
import { CurrentUser } from '../auth/current-user.decorator.js';
import type { AuthUser } from '../auth/auth.types.js';

@ApiTags('session')
@ApiBearerAuth()
@Controller('api/session')
export class SessionController {
  constructor(private readonly rpc: RpcClient) {}

  @Post('cleanup')
  @HttpCode(200)
  @ApiOperation({ summary: 'Sign-out cleanup: logs the WhatsApp account out and deletes its stored login (0 when there is nothing)' })
  @ApiBody({ schema: { type: 'object', required: ['clerkUserId'], properties: { clerkUserId: { type: 'string' } } } })
  @ApiOkResponse({ schema: { example: { success: true, sessionsCleanedUp: 1, message: SESSION_MESSAGES.cleanupDone } } })
  async cleanup(@Body() body: { clerkUserId?: unknown } | undefined, @CurrentUser() user: AuthUser) {
    // AuthGuard has already refused a clerkUserId that is not the caller.
    if (typeof body?.clerkUserId !== 'string' || body.clerkUserId === '') {
      throw AppError.validation(SessionsErrorCode.InvalidRequest, SESSION_MESSAGES.clerkUserIdRequired, { clerkUserId: SESSION_MESSAGES.clerkUserIdRequired });
    }
    const { sessionsCleanedUp } = await this.rpc.call('sessions.logout', { userId: user.userId });
    return { success: true, sessionsCleanedUp, message: sessionsCleanedUp > 0 ? SESSION_MESSAGES.cleanupDone : SESSION_MESSAGES.cleanupNothing };
  }
}
