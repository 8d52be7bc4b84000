import { Body, Controller, Get, HttpCode, Inject, Post, Req } from '@nestjs/common';
import type { Request } from 'express';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { CommonErrorCode, DevSignInBodySchema, type Infer } from '@bns/contracts';
import { AppError, Public } from '@bns/service-kit';
import { AuditTrail } from '../audit/audit-trail.js';
import { ApiSchemaBody } from '../http/openapi.js';
import { SchemaPipe } from '../http/schema.pipe.js';
import type { AuthUser } from './auth.types.js';
import { CurrentUser } from './current-user.decorator.js';
import { DevIssuer } from './dev-issuer.js';
import { DevSignOuts } from './dev-sign-outs.js';
import { Audited } from '../audit/audited.js';

const PIPES = {
  signIn: new SchemaPipe(DevSignInBodySchema, (r) =>
    AppError.validation(CommonErrorCode.BadRequest, r.message, { email: r.message }),
  ),
};

/** Only mounted with AUTH_MODE=dev; otherwise these paths answer 404 like any unknown route. */
@ApiTags('dev auth')
@Controller('auth/dev')
export class DevAuthController {
  constructor(
    @Inject(DevIssuer) private readonly issuer: DevIssuer,
    @Inject(DevSignOuts) private readonly signOuts: DevSignOuts,
    private readonly audit: AuditTrail,
  ) {}

  @Public()
  @Get('.well-known/jwks.json')
  @ApiOperation({ summary: 'Public keys of the dev issuer' })
  jwks() {
    return this.issuer.jwks;
  }

  @Public()
  @Post('sign-in')
  @HttpCode(200)
  @ApiOperation({ summary: 'Dev sign-in: a token for an e-mail (the same e-mail is always the same user)' })
  @ApiSchemaBody(DevSignInBodySchema)
  async signIn(@Body(PIPES.signIn) body: Infer<typeof DevSignInBodySchema>, @Req() req: Request) {
    const session = await this.issuer.signIn(body.email, body.firstName);
    await this.audit.record('auth.signed_in', { userId: session.userId, actor: session.email, ip: req.ip });
    return session;
  }

  /** Signed in only: the caller's token, and every other token of the same sign-in, is refused from now on. */
  @Post('sign-out')
  @Audited('auth.signed_out')
  @HttpCode(200)
  @ApiOperation({ summary: "Dev sign-out: this sign-in's tokens are refused from now on (on every gateway replica)" })
  signOut(@CurrentUser() user: AuthUser) {
    this.signOuts.signOut(user);
    return { success: true };
  }
}
