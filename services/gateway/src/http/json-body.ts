import { isUtf8 } from 'node:buffer';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { LIMITS, REQUEST_MESSAGES } from '@bns/contracts';

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_ARRAY = 0x5b;
const OPEN_OBJECT = 0x7b;
const CLOSE_ARRAY = 0x5d;
const CLOSE_OBJECT = 0x7d;

/**
 * True when the JSON text nests arrays/objects deeper than `max`. One pass over the bytes, no
 * recursion and no allocation, so it is safe on any body the size limit lets in; brackets inside
 * strings do not count. It runs before JSON.parse: anything deeper is refused before any code walks
 * the value (a recursive validator, size check or serializer would overflow the stack on it).
 */
export function jsonDepthExceeds(body: Uint8Array, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < body.length; i++) {
    const byte = body[i]!;
    if (inString) {
      if (byte === BACKSLASH) i++;
      else if (byte === QUOTE) inString = false;
    } else if (byte === QUOTE) {
      inString = true;
    } else if (byte === OPEN_ARRAY || byte === OPEN_OBJECT) {
      if (++depth > max) return true;
    } else if (byte === CLOSE_ARRAY || byte === CLOSE_OBJECT) {
      depth--;
    }
  }
  return false;
}

/** The parsed body's size in bytes, kept for the per-call size rule (`BodySizeGuard`). */
export interface SizedRequest extends IncomingMessage {
  bodyBytes?: number;
}

/** An http-errors-shaped error body-parser (or the parse step) passes on with our status and type. */
class BodyError extends Error {
  readonly status = 400;
  readonly statusCode = 400;
  readonly expose = true;
  constructor(
    readonly type: string,
    message: string,
  ) {
    super(message);
  }
}

export class JsonTooDeepError extends BodyError {
  constructor() {
    super('entity.too.deep', REQUEST_MESSAGES.tooDeep);
  }
}

export class BodyNotUtf8Error extends BodyError {
  constructor() {
    super('entity.not.utf8', REQUEST_MESSAGES.bodyNotUtf8);
  }
}

/** A body sent as text/plain, a form, XML or with no type: every body of the API is JSON. */
export class BodyNotJsonError extends BodyError {
  constructor() {
    super('entity.not.json', REQUEST_MESSAGES.bodyNotJson);
  }
}

/** Whether a request with a body says it is JSON (`application/json` or a `+json` type). */
export function declaresJson(req: IncomingMessage): boolean {
  const type = (req.headers['content-type'] ?? '').split(';', 1)[0]!.trim().toLowerCase();
  return type === 'application/json' || (type.startsWith('application/') && type.endsWith('+json'));
}

/**
 * body-parser's `verify` hook: runs on the raw bytes before JSON.parse. Records the size, refuses
 * nesting deeper than `LIMITS.jsonMaxDepth` (64; no payload of the API needs more than 5) and, in
 * UTF-8 (the default), bytes that are not UTF-8: decoding would silently turn them into U+FFFD in
 * what is sent to a customer.
 */
export function verifyJsonBody(req: SizedRequest, _res: ServerResponse, body: Buffer, encoding = 'utf-8'): void {
  req.bodyBytes = body.length;
  if (jsonDepthExceeds(body, LIMITS.jsonMaxDepth)) throw new JsonTooDeepError();
  if (/^utf-?8$/i.test(encoding) && !isUtf8(body)) throw new BodyNotUtf8Error();
}
