import { context, propagation, ROOT_CONTEXT, SpanKind, trace } from '@opentelemetry/api';
import type { NextFunction, Request, Response } from 'express';
import { redactUrl, tracer } from '@bns/service-kit';

/**
 * One server span per HTTP request, continuing a caller's `traceparent` if any. The NATS requests made
 * while handling it carry this span's context, so the request is one trace across every service.
 */
export function httpTraceMiddleware(req: Request, res: Response, next: NextFunction): void {
  const parent = propagation.extract(ROOT_CONTEXT, req.headers);
  // opt-outs: a path can carry a phone number (DELETE /api/opt-outs/{userId}/{phone}); traces never hold one
  const path = redactUrl(req.path);
  const span = tracer.startSpan(`${req.method} ${path}`, { kind: SpanKind.SERVER, attributes: { 'http.request.method': req.method, 'url.path': path } }, parent);
  res.on('finish', () => {
    span.setAttribute('http.response.status_code', res.statusCode);
    span.end();
  });
  context.with(trace.setSpan(parent, span), next);
}
