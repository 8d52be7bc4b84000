import { Controller, Get, Inject } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { CONTACT_EMAIL, type PublicConfig } from '@bns/contracts';
import { Public, SERVICE_ENV } from '@bns/service-kit';
import type { GatewayEnv } from '../config/env.js';

/** The web app's runtime settings: the same build serves any deployment. */
@ApiTags('config')
@Public()
@Controller('api/config')
export class PublicConfigController {
  constructor(@Inject(SERVICE_ENV) private readonly env: GatewayEnv) {}

  @Get()
  @ApiOperation({
    summary:
      'Public settings the web app reads at start: donation link, support e-mail, WhatsApp engine (no token needed)',
  })
  @ApiOkResponse({
    schema: {
      example: { donationUrl: 'https://example.org/donate', supportEmail: CONTACT_EMAIL, whatsappEngine: 'simulated' },
    },
  })
  get(): PublicConfig {
    return {
      donationUrl: this.env.DONATION_URL ?? null,
      supportEmail: this.env.SUPPORT_EMAIL.trim(),
      whatsappEngine: this.env.WA_ENGINE,
    };
  }
}
