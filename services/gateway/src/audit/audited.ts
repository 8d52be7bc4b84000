import {
  applyDecorators,
  Injectable,
  SetMetadata,
  UseInterceptors,
  type CallHandler,
  type ExecutionContext,
  type NestInterceptor,
} from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { from, mergeMap, type Observable } from 'rxjs';
import type { AuditKind } from '@bns/contracts';
import type { AuthedRequest } from '../auth/auth.types.js';
import { AuditTrail, personOf, type AuditDetails } from './audit-trail.js';

const AUDITED = Symbol('AUDITED');

interface AuditedOptions {
  kind: AuditKind | ((req: AuthedRequest, result: unknown) => AuditKind | undefined);
  /** What the entry says beside its kind (ids, names, counts), from the request and the answer. */
  details?: (req: AuthedRequest, result: unknown) => AuditDetails;
}

/**
 * Marks a signed-in route whose success is an action of the audit log: once the handler answered
 * without an error, the entry is published (before the answer goes out), with the caller as actor.
 */
export function Audited(
  kind: AuditedOptions['kind'],
  details?: AuditedOptions['details'],
): MethodDecorator & ClassDecorator {
  return applyDecorators(SetMetadata(AUDITED, { kind, details }), UseInterceptors(AuditInterceptor));
}

@Injectable()
export class AuditInterceptor implements NestInterceptor {
  constructor(
    private readonly reflector: Reflector,
    private readonly trail: AuditTrail,
  ) {}

  intercept(ctx: ExecutionContext, next: CallHandler): Observable<unknown> {
    const options = this.reflector.get<AuditedOptions | undefined>(AUDITED, ctx.getHandler());
    const req = ctx.switchToHttp().getRequest<AuthedRequest>();
    if (!options || !req.user) return next.handle();
    const user = req.user;
    return next.handle().pipe(
      mergeMap((result) => {
        const kind = typeof options.kind === 'function' ? options.kind(req, result) : options.kind;
        if (!kind) return from([result]);
        const recorded = this.trail.record(kind, personOf(user, req.ip), options.details?.(req, result));
        return from(recorded.then(() => result));
      }),
    );
  }
}

/** A value of the request or the answer as a detail: strings and numbers only, cut to the detail's size. */
export function detail(value: unknown): string | number | undefined {
  if (typeof value === 'number' && Number.isFinite(value)) return value;
  if (typeof value === 'string' && value !== '') return value.slice(0, 200);
  return undefined;
}

/** Details without the values that were absent. */
export function details(entries: Record<string, unknown>): AuditDetails {
  const out: AuditDetails = {};
  for (const [k, v] of Object.entries(entries)) {
    const d = detail(v);
    if (d !== undefined) out[k] = d;
  }
  return out;
}
