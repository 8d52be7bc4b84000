import { Module } from '@nestjs/common';
import { TemplatesHandler } from './templates.handler.js';
import { TemplatesRepository } from './templates.repository.js';
import { TemplatesService } from './templates.service.js';

@Module({ controllers: [TemplatesHandler], providers: [TemplatesService, TemplatesRepository] })
export class TemplatesModule {}
