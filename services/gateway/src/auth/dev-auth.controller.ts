import { Body, Controller, Get, HttpCode, Inject, Post } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { CommonErrorCode, DevSignInBodySchema, type Infer } from '@bns/contracts';
import { AppError, Public } from '@bns/service-kit';
import { ApiSchemaBody } from '../http/openapi.js';
import { SchemaPipe } from '../http/schema.pipe.js';
import type { AuthUser } from './auth.types.js';
import { CurrentUser } from './current-user.decorator.js';
import { DevIssuer } from './dev-issuer.js';
import { DevSignOuts } from './dev-sign-outs.js';

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
  signIn(@Body(PIPES.signIn) body: Infer<typeof DevSignInBodySchema>) {
    return this.issuer.signIn(body.email, body.firstName);
  }

  /** Signed in only: the caller's token, and every other token of the same sign-in, is refused from now on. */
  @Post('sign-out')
  @HttpCode(200)
  @ApiOperation({ summary: "Dev sign-out: this sign-in's tokens are refused from now on (on every gateway replica)" })
  signOut(@CurrentUser() user: AuthUser) {
    this.signOuts.signOut(user);
    return { success: true };
  }
}
