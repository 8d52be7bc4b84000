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

/** An http-errors-shaped error body-parser passes on with our status and type. */
export class JsonTooDeepError extends Error {
  readonly status = 400;
  readonly statusCode = 400;
  readonly expose = true;
  readonly type = 'entity.too.deep';
  constructor() {
    super(REQUEST_MESSAGES.tooDeep);
  }
}

/**
 * body-parser's `verify` hook: runs on the raw bytes before JSON.parse. Records the size and refuses
 * nesting deeper than `LIMITS.jsonMaxDepth` (64; no payload of the API needs more than 5).
 */
export function verifyJsonBody(req: SizedRequest, _res: ServerResponse, body: Buffer): void {
  req.bodyBytes = body.length;
  if (jsonDepthExceeds(body, LIMITS.jsonMaxDepth)) throw new JsonTooDeepError();
}
