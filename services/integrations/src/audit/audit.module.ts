import { Module } from '@nestjs/common';
import { UserDeletionsModule } from '@bns/service-kit';
import { AuditConsumer } from './audit.consumer.js';
import { AuditHandler } from './audit.handler.js';
import { AuditRepository } from './audit.repository.js';
import { AuditService } from './audit.service.js';

@Module({
  imports: [UserDeletionsModule],
  controllers: [AuditHandler],
  providers: [AuditRepository, AuditService, AuditConsumer],
  exports: [AuditService],
})
export class AuditModule {}
