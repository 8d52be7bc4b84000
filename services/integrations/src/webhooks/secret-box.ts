import { SecretBox, secretKeyProblem as keyProblem } from '@bns/service-kit';

export { SecretBox, SecretKeyMismatchError } from '@bns/service-kit';

/** What the key check row holds once opened: proof that the key in force is the one the rows were sealed with. */
export const KEY_CHECK_PLAINTEXT = 'bns-integrations-key-check';
const KEY_NAME = 'INTEGRATIONS_SECRET_KEY';

/** The key's problem in plain words (for the start-up check), or undefined when it is 32 bytes of base64 or hex. */
export function secretKeyProblem(raw: string): string | undefined {
  return keyProblem(raw, KEY_NAME);
}

/** Webhook signing secrets at rest: the shared SecretBox under INTEGRATIONS_SECRET_KEY. */
export function integrationsSecretBox(rawKey: string): SecretBox {
  return new SecretBox(rawKey, KEY_NAME);
}
