import { Inject, Injectable, SetMetadata, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { NatsConnection } from '@nats-io/transport-node';
import { CommonErrorCode, ErrorKind, LIMITS, MESSAGES, ONE_NATS_MESSAGE, type HttpCallRule } from '@bns/contracts';
import { AppError, NATS_CONNECTION } from '@bns/service-kit';
import type { SizedRequest } from './json-body.js';

const BODY_RULE = Symbol('BODY_RULE');

/** The size rule of one call (declared in contracts next to its schema); calls without one get ONE_NATS_MESSAGE. */
export const BodyRule = (rule: HttpCallRule) => SetMetadata(BODY_RULE, rule);

/**
 * Answers 413 before a body that its call cannot carry is sent anywhere: by default a body must fit
 * in one NATS message (the smaller of 1 MiB and the server's own max_payload, less the envelope).
 * A guard, run after the auth and rate-limit guards (AuthModule): as an interceptor it put every
 * HTTP call, the polls too, through Nest's RxJS pipeline.
 */
@Injectable()
export class BodySizeGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    @Inject(NATS_CONNECTION) private readonly nc: NatsConnection,
  ) {}

  canActivate(ctx: ExecutionContext): boolean {
    if (ctx.getType() === 'http') {
      const bytes = ctx.switchToHttp().getRequest<SizedRequest>().bodyBytes ?? 0;
      if (bytes === 0) return true;
      const max = this.maxBytes(
        this.reflector.getAllAndOverride<HttpCallRule>(BODY_RULE, [ctx.getHandler(), ctx.getClass()]) ??
          ONE_NATS_MESSAGE,
      );
      if (bytes > max) {
        throw new AppError(ErrorKind.PayloadTooLarge, CommonErrorCode.PayloadTooLarge, MESSAGES.payloadTooLarge, {
          details: { maxBytes: max },
        });
      }
    }
    return true;
  }

  private maxBytes(rule: HttpCallRule): number {
    const serverMax = this.nc.info?.max_payload;
    if (rule !== ONE_NATS_MESSAGE || serverMax === undefined) return rule.maxBodyBytes;
    return Math.min(rule.maxBodyBytes, serverMax - LIMITS.natsEnvelopeBytes);
  }
}
