import { Injectable, type CallHandler, type ExecutionContext, type NestInterceptor } from '@nestjs/common';
import type { Request } from 'express';
import type { Observable } from 'rxjs';
import { applyFallbacks, CONTACT_MESSAGES, ContactsErrorCode } from '@bns/contracts';
import { AppError } from '@bns/service-kit';
import type { AuthedRequest } from '../auth/auth.types.js';
import { ContactsApi } from './contacts.api.js';

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const given = (v: unknown) => Array.isArray(v) && v.length > 0;

/**
 * Before a start's body is checked: a `segmentId` is replaced by the segment's recipients as they are
 * now (each with the contact's name and fields as variables), and `{{var|fallback}}` placeholders
 * become `{{var}}` with the fallback as the value of every recipient that has none. The jobs service
 * then checks and starts the job as any other (opt-outs and not-on-WhatsApp numbers skipped).
 */
@Injectable()
export class SegmentStartInterceptor implements NestInterceptor {
  constructor(private readonly contacts: ContactsApi) {}

  async intercept(ctx: ExecutionContext, next: CallHandler): Promise<Observable<unknown>> {
    const req = ctx.switchToHttp().getRequest<Request & AuthedRequest>();
    const body: unknown = req.body;
    if (isObject(body)) {
      const rewritten: Record<string, unknown> = { ...body };
      if (body.segmentId !== undefined && body.segmentId !== null) {
        if (given(body.phoneNumbers) || given(body.recipients))
          throw AppError.validation(ContactsErrorCode.InvalidSegment, CONTACT_MESSAGES.segmentAndNumbers);
        if (typeof body.segmentId !== 'string')
          throw AppError.notFound(ContactsErrorCode.SegmentNotFound, CONTACT_MESSAGES.segmentNotFound);
        rewritten.recipients = await this.contacts.segmentRecipients(req.user!.userId, body.segmentId);
        delete rewritten.phoneNumbers;
      }
      delete rewritten.segmentId;
      if (typeof body.message === 'string') {
        const filled = applyFallbacks(body.message, rewritten);
        rewritten.message = filled.message;
        if (filled.recipients) {
          rewritten.recipients = filled.recipients;
          delete rewritten.phoneNumbers;
        }
      }
      req.body = rewritten;
    }
    return next.handle();
  }
}
