import { Module } from '@nestjs/common';
import { TemplatesController } from './templates.controller.js';

/** The /api/templates/... calls, answered by the templates service over NATS. */
@Module({ controllers: [TemplatesController] })
export class TemplatesApiModule {}
