import { Global, Module } from '@nestjs/common';
import { AuditController } from './audit.controller.js';
import { AuditTrail } from './audit-trail.js';
import { AuditInterceptor } from './audited.js';

/** The audit log's gateway side: recording the actions performed here (`@Audited`) and reading the log. */
@Global()
@Module({
  controllers: [AuditController],
  providers: [AuditTrail, AuditInterceptor],
  exports: [AuditTrail, AuditInterceptor],
})
export class AuditApiModule {}
