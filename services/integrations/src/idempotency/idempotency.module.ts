import { Module } from '@nestjs/common';
import { IdempotencyHandler } from './idempotency.handler.js';
import { IdempotencyRepository } from './idempotency.repository.js';
import { IdempotencyService } from './idempotency.service.js';

@Module({ controllers: [IdempotencyHandler], providers: [IdempotencyService, IdempotencyRepository] })
export class IdempotencyModule {}
