import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import ipaddr from 'ipaddr.js';
import { INTEGRATIONS_MESSAGES } from '@bns/contracts';

/**
 * The one door this system has to the outside: every webhook POST goes through here. SSRF is judged
 * on the address actually connected to (the socket's DNS lookup is replaced), so a name that resolves
 * to a public address when the endpoint is added and to 10.0.0.1 at delivery is refused then too.
 * Only global unicast addresses pass; `WEBHOOK_ALLOWED_HOSTS` names hosts or CIDRs that may anyway
 * (local receivers in tests), and only those may be reached over plain http. No redirect is followed.
 */
export class AllowList {
  private readonly hosts = new Set<string>();
  private readonly ranges: Array<[ipaddr.IPv4 | ipaddr.IPv6, number]> = [];

  constructor(entries: readonly string[]) {
    for (const raw of entries) {
      const entry = raw.trim().toLowerCase();
      if (entry === '') continue;
      if (entry.includes('/')) this.ranges.push(ipaddr.parseCIDR(entry));
      else if (ipaddr.isValid(entry))
        this.ranges.push([ipaddr.parse(entry), ipaddr.parse(entry).kind() === 'ipv4' ? 32 : 128]);
      else this.hosts.add(entry);
    }
  }

  /** Problems with the entries, for the start-up check. */
  static problems(entries: readonly string[]): string[] {
    const bad = entries.filter((e) => {
      try {
        new AllowList([e]);
        return false;
      } catch {
        return true;
      }
    });
    return bad.length
      ? [`WEBHOOK_ALLOWED_HOSTS has entries that are neither a host nor a CIDR: ${bad.join(', ')}`]
      : [];
  }

  hostAllowed(host: string): boolean {
    return this.hosts.has(host.toLowerCase());
  }

  addressAllowed(address: string): boolean {
    const ip = normalized(address);
    if (ip.range() === 'unicast') return true;
    return this.ranges.some(([net, bits]) => net.kind() === ip.kind() && ip.match(net, bits));
  }

  /** An IP literal in an allowed range counts as an allowed host (plain http then). */
  hostOrLiteralAllowed(host: string): boolean {
    if (this.hostAllowed(host)) return true;
    const bare = host.replace(/^\[|\]$/g, '');
    if (!isIP(bare)) return false;
    const ip = normalized(bare);
    return this.ranges.some(([net, bits]) => net.kind() === ip.kind() && ip.match(net, bits));
  }
}

/** An IPv4-mapped IPv6 address (::ffff:10.0.0.1) is judged as the IPv4 address it is. */
function normalized(address: string): ipaddr.IPv4 | ipaddr.IPv6 {
  const ip = ipaddr.parse(address);
  return ip.kind() === 'ipv6' && (ip as ipaddr.IPv6).isIPv4MappedAddress() ? (ip as ipaddr.IPv6).toIPv4Address() : ip;
}

export class RefusedAddress extends Error {
  constructor() {
    super(INTEGRATIONS_MESSAGES.webhookUrlRefused);
    this.name = 'RefusedAddress';
  }
}

/** Why a URL may not be an endpoint (the words a 400 says), or undefined. Resolves its host name. */
export async function urlProblem(raw: string, allow: AllowList): Promise<string | undefined> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return INTEGRATIONS_MESSAGES.webhookUrlInvalid;
  }
  if (url.username || url.password) return INTEGRATIONS_MESSAGES.webhookUrlHasCredentials;
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && allow.hostOrLiteralAllowed(host)))
    return INTEGRATIONS_MESSAGES.webhookUrlInvalid;
  if (allow.hostAllowed(host)) return undefined;
  let addresses: string[];
  try {
    addresses = isIP(host)
      ? [host]
      : (
          await new Promise<LookupAddress[]>((ok, fail) =>
            dnsLookup(host, { all: true }, (e, a) => (e ? fail(e) : ok(a))),
          )
        ).map((a) => a.address);
  } catch {
    return INTEGRATIONS_MESSAGES.webhookUrlUnresolvable;
  }
  return addresses.every((a) => allow.addressAllowed(a)) ? undefined : INTEGRATIONS_MESSAGES.webhookUrlRefused;
}

/** The socket's lookup: resolves, then refuses any address that is not allowed (checked at connect time). */
function guardedLookup(allow: AllowList, hostExempt: boolean): LookupFunction {
  return (hostname, options, callback) => {
    dnsLookup(hostname, { ...options, all: true }, (err, addresses: LookupAddress[]) => {
      if (err) return callback(err, '', 4);
      const ok = hostExempt ? addresses : addresses.filter((a) => allow.addressAllowed(a.address));
      if (ok.length === 0) return callback(new RefusedAddress(), '', 4);
      if ((options as { all?: boolean }).all)
        return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, ok);
      callback(null, ok[0]!.address, ok[0]!.family);
    });
  };
}

export interface PostOutcome {
  /** The endpoint's HTTP status; undefined when there was no answer. */
  status?: number;
  /** Why there was no answer (or the answer was not 2xx), in plain words without the endpoint's body. */
  error?: string;
  latencyMs: number;
}

/**
 * POSTs `body` to `url` with `headers`: one connection (no keep-alive pool to share with another
 * endpoint), `timeoutMs` for the whole exchange, at most `maxBytes` of the answer read.
 */
export function postWebhook(
  raw: string,
  body: string,
  headers: Record<string, string>,
  allow: AllowList,
  timeoutMs: number,
  maxBytes: number,
): Promise<PostOutcome> {
  const started = performance.now();
  const took = () => Math.round(performance.now() - started);
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return Promise.resolve({ error: INTEGRATIONS_MESSAGES.webhookUrlInvalid, latencyMs: 0 });
  }
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const exempt = allow.hostAllowed(host);
  const plainAllowed = allow.hostOrLiteralAllowed(host);
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && plainAllowed))
    return Promise.resolve({ error: INTEGRATIONS_MESSAGES.webhookUrlInvalid, latencyMs: 0 });
  // A literal address never reaches the lookup: judged here.
  if (isIP(host) && !exempt && !allow.addressAllowed(host))
    return Promise.resolve({ error: INTEGRATIONS_MESSAGES.webhookUrlRefused, latencyMs: 0 });
  const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise<PostOutcome>((resolve) => {
    let settled = false;
    const done = (outcome: PostOutcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      req.destroy();
      resolve(outcome);
    };
    const req = send(url, {
      method: 'POST',
      agent: false,
      lookup: guardedLookup(allow, exempt),
      headers: {
        'content-type': 'application/json',
        'user-agent': 'bns-webhooks/1',
        'content-length': Buffer.byteLength(body),
        ...headers,
      },
    });
    const timer = setTimeout(
      () => done({ error: `No answer within ${timeoutMs / 1000} s`, latencyMs: took() }),
      timeoutMs,
    );
    req.on('response', (res: IncomingMessage) => {
      let read = 0;
      const status = res.statusCode ?? 0;
      const finish = () =>
        done({
          status,
          ...(status >= 200 && status < 300
            ? {}
            : {
                error:
                  status >= 300 && status < 400
                    ? `Answered ${status} (redirects are not followed)`
                    : `Answered ${status}`,
              }),
          latencyMs: took(),
        });
      res.on('data', (chunk: Buffer) => {
        read += chunk.length;
        if (read >= maxBytes) finish();
      });
      res.on('end', finish);
      res.on('error', finish);
    });
    req.on('error', (err: Error) =>
      done({
        error:
          err instanceof RefusedAddress || err.name === 'RefusedAddress'
            ? INTEGRATIONS_MESSAGES.webhookUrlRefused
            : connectError(err),
        latencyMs: took(),
      }),
    );
    req.end(body);
  });
}

/** A socket error in plain words (its code only: messages can quote addresses). */
function connectError(err: Error & { code?: string }): string {
  switch (err.code) {
    case 'ECONNREFUSED':
      return 'Connection refused';
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return 'The host name could not be resolved';
    case 'ECONNRESET':
      return 'The connection was reset';
    default:
      return err.code?.startsWith('ERR_TLS') || err.code?.includes('CERT')
        ? 'TLS handshake failed'
        : `Connection failed${err.code ? ` (${err.code})` : ''}`;
  }
}
