import { Body, Controller, Delete, Get, HttpCode, Put, Res } from '@nestjs/common';
import type { Response } from 'express';
import { ApiBearerAuth, ApiOperation, ApiProduces, ApiResponse, ApiTags } from '@nestjs/swagger';
import {
  AccountErrorCode,
  DeleteAccountBodySchema,
  DeletionStartedSchema,
  DeletionStatusSchema,
  RetentionBodySchema,
  RetentionSchema,
  type Infer,
} from '@bns/contracts';
import { AppError } from '@bns/service-kit';
import type { AuthUser } from '../auth/auth.types.js';
import { CurrentUser } from '../auth/current-user.decorator.js';
import { ApiSchemaBody, ApiSchemaOk } from '../http/openapi.js';
import { SchemaPipe } from '../http/schema.pipe.js';
import { AccountApi } from './account.api.js';
import { Takeout } from './takeout.js';
import { Audited, details } from '../audit/audited.js';

const PIPES = {
  delete: new SchemaPipe(DeleteAccountBodySchema, (r) =>
    AppError.validation(AccountErrorCode.EmailMismatch, r.message, { email: r.message }),
  ),
  retention: new SchemaPipe(RetentionBodySchema, (r) =>
    AppError.validation(AccountErrorCode.RetentionInvalid, r.message, { days: r.message }),
  ),
};

/** Settings › Account & data: delete the account, follow the deletion, the retention setting. */
@ApiTags('account')
@ApiBearerAuth()
@Controller('api/account')
export class AccountController {
  constructor(
    private readonly account: AccountApi,
    private readonly takeout: Takeout,
  ) {}

  @Get('export')
  @Audited((_req, done) => (done === true ? 'takeout.downloaded' : undefined))
  @ApiOperation({
    summary:
      'Download my data: a zip, streamed, with a JSON and a CSV file per area (templates, campaigns with per-recipient results, opt-outs, contacts, preferences, policy, audit log); one at a time per user',
  })
  @ApiProduces('application/zip')
  @ApiResponse({ status: 409, description: 'Another download of your data is being prepared (text/plain)' })
  export(@CurrentUser() user: AuthUser, @Res() res: Response): Promise<boolean> {
    return this.takeout.stream(user.userId, res);
  }

  @Delete()
  @HttpCode(202)
  @Audited('account.deletion_requested', (_req, r) =>
    details({ deletionId: (r as { deletionId?: unknown }).deletionId }),
  )
  @ApiOperation({
    summary:
      "Delete the account and all its data in every service (confirm with the account's e-mail); every token issued before is refused at once",
  })
  @ApiSchemaBody(DeleteAccountBodySchema)
  @ApiSchemaOk(DeletionStartedSchema)
  delete(@CurrentUser() user: AuthUser, @Body(PIPES.delete) body: Infer<typeof DeleteAccountBodySchema>) {
    return this.account.delete(user, body.email);
  }

  @Get('deletion')
  @ApiOperation({ summary: "The account deletion's progress by service; still readable after the data is gone" })
  @ApiSchemaOk(DeletionStatusSchema)
  deletion(@CurrentUser() user: AuthUser) {
    return this.account.deletion(user);
  }

  @Get('retention')
  @ApiOperation({ summary: 'How long message text and per-recipient results are kept (days; null: until deleted)' })
  @ApiSchemaOk(RetentionSchema)
  retention(@CurrentUser() user: AuthUser) {
    return this.account.retention(user);
  }

  @Put('retention')
  @ApiOperation({
    summary: 'Keep message text and per-recipient results for 30, 90 or 365 days, or null: until deleted',
  })
  @ApiSchemaBody(RetentionBodySchema)
  @ApiSchemaOk(RetentionSchema)
  setRetention(@CurrentUser() user: AuthUser, @Body(PIPES.retention) body: Infer<typeof RetentionBodySchema>) {
    return this.account.setRetention(user, body.days);
  }
}
