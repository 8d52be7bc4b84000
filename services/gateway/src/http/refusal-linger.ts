import type { NextFunction, Request, Response } from 'express';
import { hasBody } from '../auth/authenticate.middleware.js';

/** How long a refused request's unread body is still read (and thrown away) after its answer went out. */
export const REFUSAL_LINGER_MS = 5000;

/**
 * A refusal (401, 413, 429, 503 …) of a request whose body is still arriving is answered at once with
 * `Connection: close`, and the connection is closed only once the rest of the body was read and thrown
 * away (at most REFUSAL_LINGER_MS): closing a socket with unread bytes makes the kernel reset it, and a
 * client still sending then sees "connection reset" instead of the answer (nginx's lingering close).
 * The answer itself is written whole at once; only the close waits. A 413 always closes. Install it first, so that every
 * later refusal — the shedder's, the guards', the body parser's — goes through it.
 */
export function lingerOnRefusal(lingerMs = REFUSAL_LINGER_MS) {
  return (req: Request, res: Response, next: NextFunction): void => {
    if (!hasBody(req)) return next();
    const end = res.end.bind(res) as (...args: unknown[]) => Response;
    res.end = ((...args: unknown[]) => {
      if (res.statusCode < 400 || req.complete || req.destroyed) {
        // A body over the limit was read whole already (by the parser); the client still hears that
        // this connection carried too much.
        if (res.statusCode === 413 && !res.headersSent) res.setHeader('Connection', 'close');
        return end(...args);
      }
      const done = typeof args[args.length - 1] === 'function' ? (args.pop() as () => void) : undefined;
      const [chunk, encoding] = args as [unknown, BufferEncoding | undefined];
      if (!res.headersSent) res.setHeader('Connection', 'close');
      // The whole answer leaves now (its Content-Length tells the client it is complete).
      if (chunk !== undefined && chunk !== null) res.write(chunk as string | Buffer, encoding ?? 'utf8');
      else res.flushHeaders();
      let closed = false;
      const close = () => {
        if (closed) return;
        closed = true;
        clearTimeout(timer);
        end(done);
      };
      const timer = setTimeout(close, lingerMs);
      timer.unref();
      req.once('end', close);
      req.once('error', close);
      req.once('close', close);
      req.resume();
      return res;
    }) as Response['end'];
    next();
  };
}
