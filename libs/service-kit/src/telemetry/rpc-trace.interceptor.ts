import { Injectable, type CallHandler, type ExecutionContext, type NestInterceptor } from '@nestjs/common';
import type { NatsContext } from '@nestjs/microservices';
import { context as otelContext, SpanStatusCode, trace } from '@opentelemetry/api';
import { Observable } from 'rxjs';
import { extractTraceContext, SpanKind, tracer } from './telemetry.js';

/** Continues the caller's trace in a NATS handler: one HTTP request is one trace across services. */
@Injectable()
export class RpcTraceInterceptor implements NestInterceptor {
  intercept(ctx: ExecutionContext, next: CallHandler): Observable<unknown> {
    if (ctx.getType() !== 'rpc') return next.handle();
    const nats = ctx.switchToRpc().getContext<NatsContext>();
    const parent = extractTraceContext(nats.getHeaders());
    const span = tracer.startSpan(`handle ${nats.getSubject()}`, { kind: SpanKind.SERVER }, parent);
    const active = trace.setSpan(parent, span);
    return new Observable((subscriber) =>
      otelContext.with(active, () =>
        next.handle().subscribe({
          next: (value) => subscriber.next(value),
          error: (err: unknown) => {
            span.setStatus({ code: SpanStatusCode.ERROR });
            span.end();
            subscriber.error(err);
          },
          complete: () => {
            span.end();
            subscriber.complete();
          },
        }),
      ),
    );
  }
}
