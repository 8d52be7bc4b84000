import { Body, Controller, Delete, Get, HttpCode, Param, Post, Put, Query, Res } from '@nestjs/common';
import { ApiBearerAuth, ApiBody, ApiOkResponse, ApiOperation, ApiParam, ApiProduces, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import {
  DEFAULT_OPT_OUT_SETTINGS,
  OPT_OUT_HTTP,
  OPT_OUT_LIMITS,
  OPT_OUT_MESSAGES,
  optOutSchemas,
  OptOutsErrorCode,
  type Infer,
} from '@bns/contracts';
import { AppError } from '@bns/service-kit';
import type { AuthUser } from '../auth/auth.types.js';
import { CurrentUser } from '../auth/current-user.decorator.js';
import { BodyRule } from '../http/body-size.js';
import { ApiSchemaBody, ApiSchemaQuery } from '../http/openapi.js';
import { SchemaPipe } from '../http/schema.pipe.js';
import { OptOutsApi } from './opt-outs.api.js';
import { Audited, details } from '../audit/audited.js';

const ENTRY_EXAMPLE = { phoneNumber: '91234567', reason: 'keyword', at: '2025-01-01T00:00:04.000Z' };

type Schemas = ReturnType<typeof optOutSchemas>;
const schemas = optOutSchemas();
/** Refusals worded and coded as the jobs service answers the same input. */
const settingsBody = new SchemaPipe(schemas.settingsPatch, (r) =>
  AppError.validation(
    OptOutsErrorCode.InvalidSettings,
    r.field === '' ? OPT_OUT_MESSAGES.settingsNotAnObject : r.message,
  ),
);
const listQuery = new SchemaPipe(schemas.listHttpQuery, (r) =>
  AppError.validation(OptOutsErrorCode.InvalidQuery, r.message),
);
const exportQuery = new SchemaPipe(schemas.exportQuery, (r) =>
  AppError.validation(OptOutsErrorCode.InvalidQuery, r.message),
);
const phonesBody = new SchemaPipe(schemas.phoneNumbersBody, (r) =>
  AppError.validation(
    r.message === OPT_OUT_MESSAGES.phoneNumbersRequired
      ? OptOutsErrorCode.PhoneNumbersRequired
      : OptOutsErrorCode.InvalidPhoneNumbers,
    r.message,
  ),
);

/**
 * The /api/opt-outs/... calls: the account's suppression list, owned by the jobs service.
 * The AuthGuard has already checked that `:userId` is the token's subject (403 otherwise); every call
 * acts as the token's user, so another user's list is never reached.
 */
@ApiTags('opt-outs')
@ApiBearerAuth()
@ApiParam({ name: 'userId', description: "The signed-in user's id (must be the token's subject)" })
@Controller('api/opt-outs')
export class OptOutsController {
  constructor(private readonly api: OptOutsApi) {}

  @Get(':userId/settings')
  @ApiOperation({ summary: 'Opt-out keywords and the optional confirmation reply' })
  @ApiOkResponse({ schema: { example: { success: true, settings: DEFAULT_OPT_OUT_SETTINGS } } })
  settings(@CurrentUser() user: AuthUser) {
    return this.api.settings(user.userId);
  }

  @Put(':userId/settings')
  @BodyRule(OPT_OUT_HTTP.settings)
  @ApiOperation({
    summary: 'Change any of keywords (1 to 20, each up to 30 characters), confirmationEnabled, confirmationText',
  })
  @ApiBody({
    schema: {
      example: {
        keywords: ['STOP', '退訂'],
        confirmationEnabled: true,
        confirmationText: DEFAULT_OPT_OUT_SETTINGS.confirmationText,
      },
    },
  })
  @ApiOkResponse({ schema: { example: { success: true, settings: DEFAULT_OPT_OUT_SETTINGS } } })
  setSettings(@CurrentUser() user: AuthUser, @Body(settingsBody) settings: Infer<Schemas['settingsPatch']>) {
    return this.api.setSettings(user.userId, settings);
  }

  @Get(':userId/export')
  @Audited('export.downloaded', () => details({ what: 'opt-outs' }))
  @ApiOperation({ summary: 'The whole list as CSV (phoneNumber,reason,at), newest first, streamed' })
  @ApiSchemaQuery(schemas.exportQuery)
  @ApiProduces('text/csv')
  export(
    @CurrentUser() user: AuthUser,
    @Query(exportQuery) _query: Infer<Schemas['exportQuery']>,
    @Res() res: Response,
  ): Promise<void> {
    return this.api.export(user.userId, res);
  }

  @Get(':userId')
  @ApiOperation({
    summary:
      'The opt-out list, newest first, a page at a time (`nextCursor` continues); `q` finds digits anywhere in the number',
  })
  @ApiSchemaQuery(schemas.listQuery)
  @ApiOkResponse({
    description: `limit: 1..${OPT_OUT_LIMITS.listPageMax} (default ${OPT_OUT_LIMITS.listPageDefault})`,
    schema: { example: { success: true, optOuts: [ENTRY_EXAMPLE], nextCursor: null, total: 1 } },
  })
  list(@CurrentUser() user: AuthUser, @Query(listQuery) query: Infer<Schemas['listHttpQuery']>) {
    return this.api.list(user.userId, query);
  }

  @Post(':userId')
  @Audited('opt_out.added', (req, r) =>
    details({
      numbers: (req.body as { phoneNumbers?: unknown[] }).phoneNumbers?.length,
      added: (r as { added?: unknown }).added,
    }),
  )
  @HttpCode(200)
  @ApiOperation({
    summary:
      'Add numbers by hand or import them (reason manual; 8-digit Hong Kong numbers, 852/+852 stripped; up to 1000 a call)',
  })
  @BodyRule(OPT_OUT_HTTP.add)
  @ApiSchemaBody(schemas.phoneNumbersBody)
  @ApiOkResponse({ schema: { example: { success: true, added: 2, alreadyListed: 0 } } })
  add(@CurrentUser() user: AuthUser, @Body(phonesBody) body: Infer<Schemas['phoneNumbersBody']>) {
    return this.api.add(user.userId, body);
  }

  @Post(':userId/check')
  @HttpCode(200)
  @ApiOperation({ summary: "Which of a job's numbers would be skipped: opted out, or remembered not on WhatsApp" })
  @BodyRule(OPT_OUT_HTTP.check)
  @ApiSchemaBody(schemas.phoneNumbersBody)
  @ApiOkResponse({ schema: { example: { success: true, optedOut: ['91234567'], notOnWhatsApp: [] } } })
  check(@CurrentUser() user: AuthUser, @Body(phonesBody) body: Infer<Schemas['phoneNumbersBody']>) {
    return this.api.check(user.userId, body);
  }

  @Delete(':userId/:phone')
  @Audited('opt_out.removed')
  @ApiOperation({ summary: 'Take a number off the list (404 when it is not on it)' })
  @ApiParam({ name: 'phone', example: '91234567' })
  @ApiOkResponse({ schema: { example: { success: true } } })
  remove(@CurrentUser() user: AuthUser, @Param('phone') phone: string) {
    return this.api.remove(user.userId, phone);
  }
}
