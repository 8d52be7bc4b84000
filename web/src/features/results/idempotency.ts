/**
 * A new Idempotency-Key for one confirmed send. `crypto.randomUUID` exists only in secure contexts
 * (https, localhost); elsewhere the key is made from `getRandomValues`, which exists everywhere.
 */
export function newIdempotencyKey(): string {
  const c = globalThis.crypto;
  if (typeof c?.randomUUID === 'function') return c.randomUUID();
  const bytes = c.getRandomValues(new Uint8Array(16));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
}
