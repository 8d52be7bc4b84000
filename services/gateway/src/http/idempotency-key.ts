import { idempotencyKeySchema, RESULTS_MESSAGES } from '@bns/contracts';
import { AppError } from '@bns/service-kit';

/**
 * An `Idempotency-Key` header, checked (1–200 printable characters); undefined when the client sent
 * none. A bad one is a 400 with the calling module's `code`.
 */
export function idempotencyKeyOf(header: unknown, code: string): string | undefined {
  if (header === undefined) return undefined;
  const parsed = idempotencyKeySchema.safeParse(Array.isArray(header) ? header[0] : header);
  if (!parsed.success) throw AppError.validation(code, RESULTS_MESSAGES.idempotencyKeyInvalid);
  return parsed.data;
}
