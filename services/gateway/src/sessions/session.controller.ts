import { Body, Controller, HttpCode, Post } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiTags } from '@nestjs/swagger';
import { SessionCleanupAnswerSchema, SessionCleanupBodySchema, SessionsErrorCode, type Infer } from '@bns/contracts';
import { AppError } from '@bns/service-kit';
import { CurrentUser } from '../auth/current-user.decorator.js';
import type { AuthUser } from '../auth/auth.types.js';
import { ApiSchemaBody, ApiSchemaOk } from '../http/openapi.js';
import { SchemaPipe } from '../http/schema.pipe.js';
import { SessionsApi } from './sessions.api.js';
import { Audited } from '../audit/audited.js';

// eslint-disable-next-line no-useless-assignment -- used by a parameter decorator of the last method, which the rule does not see
const PIPES = {
  cleanup: new SchemaPipe(SessionCleanupBodySchema, (r) =>
    AppError.validation(SessionsErrorCode.InvalidRequest, r.message, { clerkUserId: r.message }),
  ),
};

@ApiTags('session')
@ApiBearerAuth()
@Controller('api/session')
export class SessionController {
  constructor(private readonly api: SessionsApi) {}

  @Post('cleanup')
  @HttpCode(200)
  @Audited((_req, r) => ((r as { sessionsCleanedUp?: number }).sessionsCleanedUp ? 'whatsapp.unlinked' : undefined))
  @ApiOperation({
    summary: 'Sign-out cleanup: logs the WhatsApp account out and deletes its stored login (0 when there is nothing)',
  })
  @ApiSchemaBody(SessionCleanupBodySchema)
  @ApiSchemaOk(SessionCleanupAnswerSchema)
  // AuthGuard has already refused a clerkUserId that is not the caller.
  cleanup(@Body(PIPES.cleanup) _body: Infer<typeof SessionCleanupBodySchema>, @CurrentUser() user: AuthUser) {
    return this.api.cleanup(user.userId);
  }
}
