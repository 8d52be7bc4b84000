import { Module } from '@nestjs/common';
import { accountDataProviders, UserDeletionsModule } from '@bns/service-kit';
import { TemplatesAccountData } from '../account/templates-account-data.js';
import { TemplateMedia } from './template-media.js';
import { TemplatesHandler } from './templates.handler.js';
import { TemplatesRepository } from './templates.repository.js';
import { TemplatesService } from './templates.service.js';

@Module({
  imports: [UserDeletionsModule],
  controllers: [TemplatesHandler],
  providers: [
    TemplatesService,
    TemplatesRepository,
    TemplateMedia,
    ...accountDataProviders('templates', TemplatesAccountData),
  ],
})
export class TemplatesModule {}
