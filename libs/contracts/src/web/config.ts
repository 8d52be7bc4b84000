import type { WaEngineName } from '../sessions/messages.js';

/**
 * `GET /api/config` (public, no token): what the web app needs before anyone signs in. The gateway
 * fills it from its environment (DONATION_URL, SUPPORT_EMAIL, WA_ENGINE).
 */
export interface PublicConfig {
  /** Where donation links go; null when none is configured (the texts then show without a link). */
  donationUrl: string | null;
  /** The contact address of the landing page and the header. */
  supportEmail: string;
  /** The WhatsApp engine in use: the dev-only phone controls show only with `simulated`. */
  whatsappEngine: WaEngineName;
}
