import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiTags } from '@nestjs/swagger';
import {
  WebhookCreateSchema,
  WebhookDeliverySchema,
  WebhookSchema,
  WebhookUpdateSchema,
  WebhookWithSecretSchema,
  z,
} from '@bns/contracts';
import { RpcClient } from '@bns/service-kit';
import type { AuthUser } from '../auth/auth.types.js';
import { CurrentUser } from '../auth/current-user.decorator.js';
import { ApiSchemaBody, ApiSchemaCreated, ApiSchemaOk } from '../http/openapi.js';
import { Audited, details } from '../audit/audited.js';

/** The web's webhook calls, with the person's sign-in token; the integrations service owns the endpoints. */
@ApiTags('webhooks')
@ApiBearerAuth()
@Controller('api/webhooks')
export class WebhooksController {
  constructor(private readonly rpc: RpcClient) {}

  @Post()
  @HttpCode(201)
  @Audited('webhook.added', (_req, r) => details({ webhookId: (r as { id?: unknown }).id }))
  @ApiOperation({ summary: 'Add an endpoint (https, a public address) for chosen events; answers its signing secret' })
  @ApiSchemaBody(WebhookCreateSchema)
  @ApiSchemaCreated(WebhookWithSecretSchema)
  create(@CurrentUser() user: AuthUser, @Body() body: unknown) {
    return this.rpc.call('integrations.webhooks.create', { userId: user.userId, body });
  }

  @Get()
  @ApiOperation({ summary: 'The endpoints, with their state (a notice when one was disabled for failing)' })
  @ApiSchemaOk(z.object({ webhooks: z.array(WebhookSchema) }))
  list(@CurrentUser() user: AuthUser) {
    return this.rpc.call('integrations.webhooks.list', { userId: user.userId });
  }

  @Patch(':webhookId')
  @Audited('webhook.changed', (req) => details({ webhookId: req.params.webhookId }))
  @ApiOperation({ summary: 'Enable or disable an endpoint, change its events or URL' })
  @ApiSchemaBody(WebhookUpdateSchema)
  @ApiSchemaOk(WebhookSchema)
  update(@CurrentUser() user: AuthUser, @Param('webhookId') webhookId: string, @Body() body: unknown) {
    return this.rpc.call('integrations.webhooks.update', { userId: user.userId, webhookId, body });
  }

  @Delete(':webhookId')
  @Audited('webhook.removed', (req) => details({ webhookId: req.params.webhookId }))
  @ApiOperation({ summary: 'Delete an endpoint and its deliveries' })
  remove(@CurrentUser() user: AuthUser, @Param('webhookId') webhookId: string) {
    return this.rpc.call('integrations.webhooks.delete', { userId: user.userId, webhookId });
  }

  @Get(':webhookId/secret')
  @ApiOperation({ summary: 'The signing secret (whsec_…)' })
  @ApiSchemaOk(WebhookWithSecretSchema)
  secret(@CurrentUser() user: AuthUser, @Param('webhookId') webhookId: string) {
    return this.rpc.call('integrations.webhooks.secret', { userId: user.userId, webhookId });
  }

  @Post(':webhookId/rotate')
  @Audited('webhook.changed', (req) => details({ webhookId: req.params.webhookId, change: 'secret rotated' }))
  @HttpCode(200)
  @ApiOperation({ summary: 'A new signing secret; the old one still signs beside it for 24 h' })
  @ApiSchemaOk(WebhookWithSecretSchema)
  rotate(@CurrentUser() user: AuthUser, @Param('webhookId') webhookId: string) {
    return this.rpc.call('integrations.webhooks.rotate', { userId: user.userId, webhookId });
  }

  @Post(':webhookId/test')
  @HttpCode(202)
  @ApiOperation({ summary: 'Send a webhook.test event to the endpoint now' })
  test(@CurrentUser() user: AuthUser, @Param('webhookId') webhookId: string) {
    return this.rpc.call('integrations.webhooks.test', { userId: user.userId, webhookId });
  }

  @Get(':webhookId/deliveries')
  @ApiOperation({ summary: 'The last 100 deliveries: event type, HTTP status, latency, attempts (never the payload)' })
  @ApiSchemaOk(z.object({ deliveries: z.array(WebhookDeliverySchema) }))
  deliveries(@CurrentUser() user: AuthUser, @Param('webhookId') webhookId: string) {
    return this.rpc.call('integrations.webhooks.deliveries', { userId: user.userId, webhookId });
  }

  @Post(':webhookId/deliveries/:deliveryId/resend')
  @HttpCode(202)
  @ApiOperation({ summary: 'Send a delivery again now (same webhook-id)' })
  resend(
    @CurrentUser() user: AuthUser,
    @Param('webhookId') webhookId: string,
    @Param('deliveryId') deliveryId: string,
  ) {
    return this.rpc.call('integrations.webhooks.resend', { userId: user.userId, webhookId, deliveryId });
  }
}
