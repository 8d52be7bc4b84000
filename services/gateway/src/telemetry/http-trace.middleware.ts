import type { IncomingMessage, ServerResponse } from 'node:http';
import { context, propagation, ROOT_CONTEXT, SpanKind, trace, type Context } from '@opentelemetry/api';
import type { NextFunction, Request, Response } from 'express';
import { redactUrl, tracer } from '@bns/service-kit';

/**
 * One server span per HTTP request, continuing a caller's `traceparent` if any. The NATS requests made
 * while handling it carry this span's context, so the request is one trace across every service.
 */
export function httpTraceMiddleware(req: Request, res: Response, next: NextFunction): void {
  context.with(traceHttpRequest(req, res), next);
}

/**
 * Starts the request's server span (ended when the answer is sent) and answers the context to handle
 * it in. Plain Node request and response: the gateway's front door traces what it answers before Express.
 */
export function traceHttpRequest(req: IncomingMessage, res: ServerResponse): Context {
  const parent = propagation.extract(ROOT_CONTEXT, req.headers);
  // opt-outs: a path can carry a phone number (DELETE /api/opt-outs/{userId}/{phone}); traces never hold one
  const path = redactUrl((req.url ?? '/').split('?', 1)[0]!);
  const span = tracer.startSpan(
    `${req.method} ${path}`,
    { kind: SpanKind.SERVER, attributes: { 'http.request.method': req.method, 'url.path': path } },
    parent,
  );
  res.on('finish', () => {
    span.setAttribute('http.response.status_code', res.statusCode);
    span.end();
  });
  return trace.setSpan(parent, span);
}
