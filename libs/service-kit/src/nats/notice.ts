import type { Msg } from '@nats-io/transport-node';

/** A schema that can check a decoded body (a zod schema of `@bns/contracts`). */
interface NoticeSchema<T> {
  safeParse(value: unknown): { success: true; data: T } | { success: false };
}

/** A core NATS notice's body checked against its schema; undefined when it is not JSON or not of that shape. */
export function noticeOf<T>(msg: Msg, schema: NoticeSchema<T>): T | undefined {
  let body: unknown;
  try {
    body = msg.json();
  } catch {
    return undefined;
  }
  const checked = schema.safeParse(body);
  return checked.success ? checked.data : undefined;
}
