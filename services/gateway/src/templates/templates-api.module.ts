import { Module } from '@nestjs/common';
import { TemplatesApi } from './templates.api.js';
import { TemplatesController } from './templates.controller.js';

/** The /api/templates/... calls, answered by the templates service over NATS. */
@Module({ controllers: [TemplatesController], providers: [TemplatesApi] })
export class TemplatesApiModule {}
