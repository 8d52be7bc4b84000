import { Body, Controller, Get, HttpCode, Inject, Post } from '@nestjs/common';
import { ApiOperation, ApiProperty, ApiPropertyOptional, ApiTags } from '@nestjs/swagger';
import { CommonErrorCode } from '@bns/contracts';
import { AppError, Public } from '@bns/service-kit';
import { DevIssuer } from './dev-issuer.js';

class DevSignInBody {
  @ApiProperty({ example: 'owner@shop.hk' })
  email!: string;
  @ApiPropertyOptional({ example: 'Ann' })
  firstName?: string;
}

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

/** Only mounted with AUTH_MODE=dev; otherwise these paths answer 404 like any unknown route. */
@ApiTags('dev auth')
@Public()
@Controller('auth/dev')
export class DevAuthController {
  constructor(@Inject(DevIssuer) private readonly issuer: DevIssuer) {}

  @Get('.well-known/jwks.json')
  @ApiOperation({ summary: 'Public keys of the dev issuer' })
  jwks() {
    return this.issuer.jwks;
  }

  @Post('sign-in')
  @HttpCode(200)
  @ApiOperation({ summary: 'Dev sign-in: a token for an e-mail (the same e-mail is always the same user)' })
  signIn(@Body() body: DevSignInBody) {
    const email = typeof body?.email === 'string' ? body.email.trim() : '';
    if (email.length > 254 || !EMAIL.test(email)) {
      throw AppError.validation(CommonErrorCode.BadRequest, 'Please enter a valid e-mail address', { email: 'Please enter a valid e-mail address' });
    }
    const firstName = typeof body.firstName === 'string' && body.firstName.trim() !== '' ? body.firstName.trim().slice(0, 100) : undefined;
    return this.issuer.signIn(email, firstName);
  }
}
