import type { IncomingMessage } from 'node:http';
import type { INestApplicationContext } from '@nestjs/common';
import { IoAdapter } from '@nestjs/platform-socket.io';

// @nestjs/platform-socket.io brings its own copy of socket.io: use its types, not the top-level ones.
type ServerOptions = NonNullable<Parameters<IoAdapter['createIOServer']>[1]>;
type IoServer = ReturnType<IoAdapter['createIOServer']>;

/**
 * socket.io with the same origin rule as HTTP: the page's own origin, plus CORS_ORIGINS. CORS headers
 * alone do not stop a WebSocket (browsers do not apply CORS to it), so a handshake from any other
 * Origin is refused outright; clients without an Origin (servers, tests) are not browsers and pass.
 */
export class GatewayIoAdapter extends IoAdapter {
  constructor(
    app: INestApplicationContext,
    private readonly allowedOrigins: readonly string[],
  ) {
    super(app);
  }

  override createIOServer(port: number, options?: ServerOptions): IoServer {
    const allowed = this.allowedOrigins;
    return super.createIOServer(port, {
      ...options,
      cors: allowed.length > 0 ? { origin: [...allowed], credentials: true } : undefined,
      allowRequest: (req: IncomingMessage, callback: (err: string | null | undefined, success: boolean) => void) =>
        callback(null, originAllowed(req, allowed)),
    } as ServerOptions);
  }
}

export function originAllowed(req: IncomingMessage, allowed: readonly string[]): boolean {
  const origin = req.headers.origin;
  if (!origin) return true;
  if (allowed.includes(origin)) return true;
  try {
    return new URL(origin).host === req.headers.host;
  } catch {
    return false;
  }
}
