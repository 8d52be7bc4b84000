import { once } from 'node:events';
import { Body, Controller, Delete, Get, HttpCode, Param, Post, Put, Query, Res } from '@nestjs/common';
import { ApiBearerAuth, ApiBody, ApiOkResponse, ApiOperation, ApiParam, ApiProduces, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import {
  DEFAULT_OPT_OUT_SETTINGS,
  OPT_OUT_CSV_HEADER,
  OPT_OUT_HTTP,
  OPT_OUT_LIMITS,
  OPT_OUT_MESSAGES,
  optOutCsvLine,
  optOutSchemas,
  OptOutsErrorCode,
  type Infer,
} from '@bns/contracts';
import { AppError, RpcClient } from '@bns/service-kit';
import type { AuthUser } from '../auth/auth.types.js';
import { CurrentUser } from '../auth/current-user.decorator.js';
import { BodyRule } from '../http/body-size.js';
import { ApiSchemaBody, ApiSchemaQuery } from '../http/openapi.js';
import { SchemaPipe } from '../http/schema.pipe.js';

const ENTRY_EXAMPLE = { phoneNumber: '91234567', reason: 'keyword', at: '2025-01-01T00:00:04.000Z' };

type Schemas = ReturnType<typeof optOutSchemas>;
const schemas = optOutSchemas();
/** Refusals worded and coded as the jobs service answers the same input. */
const settingsBody = new SchemaPipe(schemas.settingsPatch, (r) =>
  AppError.validation(OptOutsErrorCode.InvalidSettings, r.field === '' ? OPT_OUT_MESSAGES.settingsNotAnObject : r.message),
);
const listQuery = new SchemaPipe(schemas.listHttpQuery, (r) => AppError.validation(OptOutsErrorCode.InvalidQuery, r.message));
const exportQuery = new SchemaPipe(schemas.exportQuery, (r) => AppError.validation(OptOutsErrorCode.InvalidQuery, r.message));
const phonesBody = new SchemaPipe(schemas.phoneNumbersBody, (r) =>
  AppError.validation(
    r.message === OPT_OUT_MESSAGES.phoneNumbersRequired ? OptOutsErrorCode.PhoneNumbersRequired : OptOutsErrorCode.InvalidPhoneNumbers,
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
  constructor(private readonly rpc: RpcClient) {}

  @Get(':userId/settings')
  @ApiOperation({ summary: 'Opt-out keywords and the optional confirmation reply' })
  @ApiOkResponse({ schema: { example: { success: true, settings: DEFAULT_OPT_OUT_SETTINGS } } })
  async settings(@CurrentUser() user: AuthUser) {
    return { success: true, settings: await this.rpc.call('jobs.optouts.settings.get', { userId: user.userId }) };
  }

  @Put(':userId/settings')
  @BodyRule(OPT_OUT_HTTP.settings)
  @ApiOperation({ summary: 'Change any of keywords (1 to 20, each up to 30 characters), confirmationEnabled, confirmationText' })
  @ApiBody({ schema: { example: { keywords: ['STOP', '退訂'], confirmationEnabled: true, confirmationText: DEFAULT_OPT_OUT_SETTINGS.confirmationText } } })
  @ApiOkResponse({ schema: { example: { success: true, settings: DEFAULT_OPT_OUT_SETTINGS } } })
  async setSettings(@CurrentUser() user: AuthUser, @Body(settingsBody) settings: Infer<Schemas['settingsPatch']>) {
    // Only the three settings go on (a body clerkUserId was the AuthGuard's); the jobs service checks the merged whole.
    return { success: true, settings: await this.rpc.call('jobs.optouts.settings.set', { userId: user.userId, settings }) };
  }

  @Get(':userId/export')
  @ApiOperation({ summary: 'The whole list as CSV (phoneNumber,reason,at), newest first, streamed' })
  @ApiSchemaQuery(schemas.exportQuery)
  @ApiProduces('text/csv')
  async export(@CurrentUser() user: AuthUser, @Query(exportQuery) _query: Infer<Schemas['exportQuery']>, @Res() res: Response): Promise<void> {
    // The first page is asked for before anything is written, so a failure is still a clean error answer.
    let page = await this.rpc.call('jobs.optouts.export', { userId: user.userId });
    res.status(200);
    res.setHeader('Content-Type', 'text/csv; charset=utf-8');
    res.setHeader('Content-Disposition', 'attachment; filename="opt-outs.csv"');
    res.setHeader('Cache-Control', 'no-store');
    try {
      await this.write(res, `${OPT_OUT_CSV_HEADER}\r\n`);
      for (;;) {
        if (page.optOuts.length > 0) await this.write(res, page.optOuts.map((e) => `${optOutCsvLine(e)}\r\n`).join(''));
        if (!page.nextCursor || res.destroyed) break;
        page = await this.rpc.call('jobs.optouts.export', { userId: user.userId, cursor: page.nextCursor });
      }
      res.end();
    } catch {
      // Headers are out: the only honest signal left is a cut connection, never a CSV that looks complete.
      res.destroy();
    }
  }

  @Get(':userId')
  @ApiOperation({ summary: 'The opt-out list, newest first, a page at a time (`nextCursor` continues); `q` finds digits anywhere in the number' })
  @ApiSchemaQuery(schemas.listQuery)
  @ApiOkResponse({
    description: `limit: 1..${OPT_OUT_LIMITS.listPageMax} (default ${OPT_OUT_LIMITS.listPageDefault})`,
    schema: { example: { success: true, optOuts: [ENTRY_EXAMPLE], nextCursor: null, total: 1 } },
  })
  async list(@CurrentUser() user: AuthUser, @Query(listQuery) query: Infer<Schemas['listHttpQuery']>) {
    const reply = await this.rpc.call('jobs.optouts.list', { userId: user.userId, ...query });
    return { success: true, ...reply };
  }

  @Post(':userId')
  @HttpCode(200)
  @ApiOperation({ summary: 'Add numbers by hand or import them (reason manual; 8-digit Hong Kong numbers, 852/+852 stripped; up to 1000 a call)' })
  @BodyRule(OPT_OUT_HTTP.add)
  @ApiSchemaBody(schemas.phoneNumbersBody)
  @ApiOkResponse({ schema: { example: { success: true, added: 2, alreadyListed: 0 } } })
  async add(@CurrentUser() user: AuthUser, @Body(phonesBody) body: Infer<Schemas['phoneNumbersBody']>) {
    const reply = await this.rpc.call('jobs.optouts.add', { userId: user.userId, phoneNumbers: body.phoneNumbers });
    return { success: true, ...reply };
  }

  @Post(':userId/check')
  @HttpCode(200)
  @ApiOperation({ summary: "Which of a job's numbers would be skipped: opted out, or remembered not on WhatsApp" })
  @BodyRule(OPT_OUT_HTTP.check)
  @ApiSchemaBody(schemas.phoneNumbersBody)
  @ApiOkResponse({ schema: { example: { success: true, optedOut: ['91234567'], notOnWhatsApp: [] } } })
  async check(@CurrentUser() user: AuthUser, @Body(phonesBody) body: Infer<Schemas['phoneNumbersBody']>) {
    return { success: true, ...(await this.rpc.call('jobs.optouts.check', { userId: user.userId, phoneNumbers: body.phoneNumbers })) };
  }

  @Delete(':userId/:phone')
  @ApiOperation({ summary: 'Take a number off the list (404 when it is not on it)' })
  @ApiParam({ name: 'phone', example: '91234567' })
  @ApiOkResponse({ schema: { example: { success: true } } })
  async remove(@CurrentUser() user: AuthUser, @Param('phone') phone: string) {
    await this.rpc.call('jobs.optouts.remove', { userId: user.userId, phone });
    return { success: true };
  }

  private async write(res: Response, chunk: string): Promise<void> {
    if (!res.write(chunk)) await once(res, 'drain');
  }
}
