import { Module } from '@nestjs/common';
import { TemplatesHandler } from './templates.handler.js';
import { TemplatesService } from './templates.service.js';

@Module({ controllers: [TemplatesHandler], providers: [TemplatesService] })
export class TemplatesModule {}
