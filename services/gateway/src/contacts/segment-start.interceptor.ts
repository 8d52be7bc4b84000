import { Injectable, type CallHandler, type ExecutionContext, type NestInterceptor } from '@nestjs/common';
import type { Request } from 'express';
import type { Observable } from 'rxjs';
import type { AuthedRequest } from '../auth/auth.types.js';
import { ContactsApi } from './contacts.api.js';

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A start's `segmentId` and `{{var|fallback}}` placeholders resolved before its body is checked (ContactsApi.resolveStart). */
@Injectable()
export class SegmentStartInterceptor implements NestInterceptor {
  constructor(private readonly contacts: ContactsApi) {}

  async intercept(ctx: ExecutionContext, next: CallHandler): Promise<Observable<unknown>> {
    const req = ctx.switchToHttp().getRequest<Request & AuthedRequest>();
    const body: unknown = req.body;
    if (isObject(body)) req.body = await this.contacts.resolveStart(req.user!.userId, body);
    return next.handle();
  }
}
