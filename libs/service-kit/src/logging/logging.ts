import type { Params } from 'nestjs-pino';

/** Never logged: credentials, tokens, QR payloads (a QR is a login secret while it is live). */
export const REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'res.headers["set-cookie"]',
  '*.token',
  '*.password',
  '*.secret',
  '*.authorization',
  '*.qr',
  'qr',
  'token',
];

export function loggerParams(service: string, level: string, http: boolean): Params {
  return {
    pinoHttp: {
      level,
      base: { service },
      redact: { paths: REDACT_PATHS, censor: '[redacted]' },
      autoLogging: http ? { ignore: (req) => req.url === '/healthz' || req.url === '/readyz' } : false,
      timestamp: () => `,"time":"${new Date().toISOString()}"`,
    },
  };
}
