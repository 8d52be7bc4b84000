import { Module } from '@nestjs/common';
import { ApiKeysHandler } from './api-keys.handler.js';
import { ApiKeysRepository } from './api-keys.repository.js';
import { ApiKeysService } from './api-keys.service.js';

@Module({ controllers: [ApiKeysHandler], providers: [ApiKeysService, ApiKeysRepository] })
export class ApiKeysModule {}
