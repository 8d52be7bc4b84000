import { Controller, Get, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiTags } from '@nestjs/swagger';
import { AccountErrorCode, AuditPageSchema, AuditQuerySchema, type Infer } from '@bns/contracts';
import { AppError, RpcClient } from '@bns/service-kit';
import type { AuthUser } from '../auth/auth.types.js';
import { CurrentUser } from '../auth/current-user.decorator.js';
import { ApiSchemaOk, ApiSchemaQuery } from '../http/openapi.js';
import { SchemaPipe } from '../http/schema.pipe.js';

// eslint-disable-next-line no-useless-assignment -- used by a parameter decorator, which the rule does not see
const auditQuery = new SchemaPipe(AuditQuerySchema, (r) =>
  AppError.validation(AccountErrorCode.AuditQueryInvalid, r.message, r.errors),
);

/** Settings › Account & data: the user's own audit log (reading only: no call changes an entry). */
@ApiTags('account')
@ApiBearerAuth()
@Controller('api/audit')
export class AuditController {
  constructor(private readonly rpc: RpcClient) {}

  @Get()
  @ApiOperation({
    summary:
      'The audit log, newest first, a page at a time (`nextCursor` continues): sign-ins, links, keys, webhooks, policy, campaigns, downloads, opt-outs by hand, deletion; kept a year',
  })
  @ApiSchemaQuery(AuditQuerySchema)
  @ApiSchemaOk(AuditPageSchema)
  list(@CurrentUser() user: AuthUser, @Query(auditQuery) query: Infer<typeof AuditQuerySchema>) {
    return this.rpc.call('integrations.audit.list', { userId: user.userId, ...query });
  }
}
