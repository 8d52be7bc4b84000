import { Body, Controller, Delete, Get, HttpCode, Param, Post } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiTags } from '@nestjs/swagger';
import { ApiKeyCreateSchema, ApiKeyCreatedSchema, ApiKeySchema, z } from '@bns/contracts';
import { RpcClient } from '@bns/service-kit';
import type { AuthUser } from '../auth/auth.types.js';
import { CurrentUser } from '../auth/current-user.decorator.js';
import { ApiSchemaBody, ApiSchemaCreated, ApiSchemaOk } from '../http/openapi.js';
import { Audited, details } from '../audit/audited.js';

/**
 * The web's API-key calls, with the person's sign-in token (an API key is refused here: it is no
 * sign-in token). The integrations service validates, stores hashes only and answers the secret once.
 */
@ApiTags('api-keys')
@ApiBearerAuth()
@Controller('api/keys')
export class ApiKeysController {
  constructor(private readonly rpc: RpcClient) {}

  @Post()
  @HttpCode(201)
  @Audited('api_key.created', (_req, r) =>
    details({ keyId: (r as { id?: unknown }).id, prefix: (r as { prefix?: unknown }).prefix }),
  )
  @ApiOperation({ summary: 'Create an API key with a name and scopes; the answer holds its secret, shown this once' })
  @ApiSchemaBody(ApiKeyCreateSchema)
  @ApiSchemaCreated(ApiKeyCreatedSchema)
  create(@CurrentUser() user: AuthUser, @Body() body: unknown) {
    return this.rpc.call('integrations.keys.create', { userId: user.userId, body });
  }

  @Get()
  @ApiOperation({ summary: 'The live API keys: name, scopes, prefix, created and last-used time' })
  @ApiSchemaOk(z.object({ keys: z.array(ApiKeySchema) }))
  list(@CurrentUser() user: AuthUser) {
    return this.rpc.call('integrations.keys.list', { userId: user.userId });
  }

  @Delete(':keyId')
  @Audited('api_key.revoked', (req) => details({ keyId: req.params.keyId }))
  @ApiOperation({ summary: 'Revoke an API key: every gateway replica refuses it within a second' })
  revoke(@CurrentUser() user: AuthUser, @Param('keyId') keyId: string) {
    return this.rpc.call('integrations.keys.revoke', { userId: user.userId, keyId });
  }
}
