import { Module } from '@nestjs/common';
import type { NatsConnection } from '@nats-io/transport-node';
import { NATS_CONNECTION, RpcClient } from '@bns/service-kit';
import { ApiKeysController } from './api-keys.controller.js';
import { ApiKeyVerifier } from './api-key-verifier.js';
import { WebhooksController } from '../webhooks/webhooks.controller.js';

/** /api/keys and /api/webhooks (the web's calls), and the API-key verifier the /v1 API uses. */
@Module({
  controllers: [ApiKeysController, WebhooksController],
  providers: [
    {
      provide: ApiKeyVerifier,
      useFactory: (nc: NatsConnection, rpc: RpcClient) => new ApiKeyVerifier(nc, rpc),
      inject: [NATS_CONNECTION, RpcClient],
    },
  ],
  exports: [ApiKeyVerifier],
})
export class ApiKeysApiModule {}
