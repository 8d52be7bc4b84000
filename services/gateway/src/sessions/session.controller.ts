import { Body, Controller, HttpCode, Post } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiTags } from '@nestjs/swagger';
import { SESSION_MESSAGES, SessionCleanupAnswerSchema, SessionCleanupBodySchema, SessionsErrorCode, type Infer } from '@bns/contracts';
import { AppError, RpcClient } from '@bns/service-kit';
import { CurrentUser } from '../auth/current-user.decorator.js';
import type { AuthUser } from '../auth/auth.types.js';
import { ApiSchemaBody, ApiSchemaOk } from '../http/openapi.js';
import { SchemaPipe } from '../http/schema.pipe.js';

// eslint-disable-next-line no-useless-assignment -- used by a parameter decorator of the last method, which the rule does not see
const PIPES = { cleanup: new SchemaPipe(SessionCleanupBodySchema, (r) => AppError.validation(SessionsErrorCode.InvalidRequest, r.message, { clerkUserId: r.message })) };

@ApiTags('session')
@ApiBearerAuth()
@Controller('api/session')
export class SessionController {
  constructor(private readonly rpc: RpcClient) {}

  @Post('cleanup')
  @HttpCode(200)
  @ApiOperation({ summary: 'Sign-out cleanup: logs the WhatsApp account out and deletes its stored login (0 when there is nothing)' })
  @ApiSchemaBody(SessionCleanupBodySchema)
  @ApiSchemaOk(SessionCleanupAnswerSchema)
  // AuthGuard has already refused a clerkUserId that is not the caller.
  async cleanup(@Body(PIPES.cleanup) _body: Infer<typeof SessionCleanupBodySchema>, @CurrentUser() user: AuthUser) {
    const { sessionsCleanedUp, failures = [] } = await this.rpc.call('sessions.logout', { userId: user.userId });
    if (failures.length > 0) {
      // A partial cleanup is still a 200: sign-out goes on, and the web warns with what is left.
      return {
        success: false,
        partial: true,
        sessionsCleanedUp,
        error: failures.map((f) => f.message).join('; '),
        message: SESSION_MESSAGES.cleanupPartial,
        failures,
      };
    }
    return { success: true, sessionsCleanedUp, message: sessionsCleanedUp > 0 ? SESSION_MESSAGES.cleanupDone : SESSION_MESSAGES.cleanupNothing };
  }
}
