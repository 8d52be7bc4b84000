import { Controller } from '@nestjs/common';
import { Payload } from '@nestjs/microservices';
import type { ReplyOf, RequestOf } from '@bns/contracts';
import { Rpc } from '@bns/service-kit';
import { AuditService } from './audit.service.js';

/** NATS entry point of the audit log: reading only (no call changes or removes an entry). */
@Controller()
export class AuditHandler {
  constructor(private readonly audit: AuditService) {}

  @Rpc('integrations.audit.list')
  list(@Payload() req: RequestOf<'integrations.audit.list'>): Promise<ReplyOf<'integrations.audit.list'>> {
    return this.audit.list(req);
  }
}
