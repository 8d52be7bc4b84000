import type { IncomingMessage } from 'node:http';
import proxyaddr from 'proxy-addr';

/**
 * TRUST_PROXY as Express's `trust proxy` setting. Off by default: the client address is the socket's
 * peer, and an X-Forwarded-For header (which anyone can send) is ignored. `true` (trust every hop) is
 * refused on purpose: it lets any caller pick its own address and so escape per-address limits.
 */
export function trustProxySetting(raw: string): false | number | string[] {
  const value = raw.trim().toLowerCase();
  if (value === '' || value === 'off' || value === 'false' || value === '0') return false;
  if (/^\d+$/.test(value)) return Number(value);
  if (value === 'true' || value === 'on') {
    throw new Error(
      'TRUST_PROXY=true would trust any X-Forwarded-For: give the number of proxies in front (1) or their addresses',
    );
  }
  return raw
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}

type TrustFn = (addr: string, hop: number) => boolean;

/** The client address of a raw request (a socket.io handshake), by the same rule Express uses for req.ip. */
export function clientAddressOf(setting: false | number | string[]): (req: IncomingMessage) => string {
  if (setting === false) return (req) => req.socket.remoteAddress ?? 'unknown';
  const trust: TrustFn = typeof setting === 'number' ? (_addr, hop) => hop < setting : proxyaddr.compile(setting);
  return (req) => proxyaddr(req, trust);
}
