import { createHash, randomBytes } from 'node:crypto';
import { API_KEY_PREFIX, INTEGRATIONS_LIMITS } from '@bns/contracts';

/** A new key: `bns_` + 32 random bytes (base64url), its SHA-256 and the prefix lists show. */
export function newKeySecret(): { secret: string; hash: string; prefix: string } {
  const secret = API_KEY_PREFIX + randomBytes(INTEGRATIONS_LIMITS.apiKeySecretBytes).toString('base64url');
  return { secret, hash: hashKeySecret(secret), prefix: secret.slice(0, INTEGRATIONS_LIMITS.apiKeyPrefixLength) };
}

/** What is stored and looked up: the gateway hashes a presented key the same way. */
export function hashKeySecret(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}
