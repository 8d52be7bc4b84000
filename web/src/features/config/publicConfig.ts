import { useEffect, useState } from 'react';
import { CONTACT_EMAIL, type PublicConfig } from '@bns/contracts';

/** The deployment's settings as the web uses them; the engine is null until the gateway answered. */
export interface WebConfig extends Omit<PublicConfig, 'whatsappEngine'> {
  whatsappEngine: PublicConfig['whatsappEngine'] | null;
}

export const DEFAULT_WEB_CONFIG: WebConfig = { donationUrl: null, supportEmail: CONTACT_EMAIL, whatsappEngine: null };

let cached: WebConfig | null = null;
let pending: Promise<WebConfig> | null = null;

/** Only an http(s) address becomes a link: a donation link never leads nowhere. */
function safeUrl(value: unknown): string | null {
  if (typeof value !== 'string') return null;
  try {
    const url = new URL(value);
    return url.protocol === 'https:' || url.protocol === 'http:' ? url.href : null;
  } catch {
    return null;
  }
}

/** GET /api/config once per page; the defaults stand in while it loads or if it fails. */
export function loadWebConfig(fetchImpl: typeof fetch = fetch): Promise<WebConfig> {
  if (cached) return Promise.resolve(cached);
  pending ??= fetchImpl(`${globalThis.location?.origin ?? ''}/api/config`, { headers: { Accept: 'application/json' } })
    .then(async (res) => {
      if (!res.ok) throw new Error(`config answered ${res.status}`);
      const body = (await res.json()) as Partial<PublicConfig>;
      cached = {
        donationUrl: safeUrl(body.donationUrl),
        supportEmail:
          typeof body.supportEmail === 'string' && body.supportEmail.includes('@') ? body.supportEmail : CONTACT_EMAIL,
        whatsappEngine:
          body.whatsappEngine === 'simulated' || body.whatsappEngine === 'webjs' ? body.whatsappEngine : null,
      };
      return cached;
    })
    .catch(() => {
      // A later render may try again.
      pending = null;
      return DEFAULT_WEB_CONFIG;
    });
  return pending;
}

/** For tests: forget what was loaded. */
export function resetWebConfig(config: WebConfig | null = null): void {
  cached = config;
  pending = null;
}

export function useWebConfig(): WebConfig {
  const [config, setConfig] = useState<WebConfig>(() => cached ?? DEFAULT_WEB_CONFIG);
  useEffect(() => {
    let live = true;
    void loadWebConfig().then((c) => live && setConfig(c));
    return () => {
      live = false;
    };
  }, []);
  return config;
}
