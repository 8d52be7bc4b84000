/** `{{name|customer}}`: a placeholder with the value to use when the recipient has none. */
const WITH_FALLBACK = /\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\|([^{}]*)\}\}/g;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const hasValue = (v: unknown) =>
  (typeof v === 'string' && v.trim() !== '') || typeof v === 'number' || typeof v === 'boolean';

/** The `{{var|fallback}}` placeholders of a message: name → fallback (the first one given wins). */
export function fallbacksIn(message: string): Map<string, string> {
  const found = new Map<string, string>();
  for (const m of message.matchAll(WITH_FALLBACK)) if (!found.has(m[1]!)) found.set(m[1]!, m[2]!.trim());
  return found;
}

/**
 * A start with `{{var|fallback}}` placeholders as the send path takes it: each becomes `{{var}}`, and
 * every recipient without a value for `var` gets the fallback as its value. A list of bare numbers
 * becomes recipients, each with the fallbacks. Anything that is not a list is left for the start's
 * own checks to refuse.
 */
export function applyFallbacks(
  message: string,
  list: { phoneNumbers?: unknown; recipients?: unknown },
): { message: string; recipients?: unknown[] } {
  const fallbacks = fallbacksIn(message);
  if (fallbacks.size === 0) return { message };
  const plain = message.replace(WITH_FALLBACK, (_whole, name: string) => `{{${name}}}`);
  const rows: unknown[] | undefined =
    Array.isArray(list.recipients) && list.recipients.length > 0
      ? list.recipients
      : Array.isArray(list.phoneNumbers)
        ? list.phoneNumbers.map((phone) => ({ phone }))
        : undefined;
  if (!rows) return { message: plain };
  const recipients = rows.map((row) => {
    if (!isObject(row)) return row;
    const variables: Record<string, unknown> = isObject(row.variables) ? { ...row.variables } : {};
    for (const [name, fallback] of fallbacks) if (!hasValue(variables[name])) variables[name] = fallback;
    return { ...row, variables };
  });
  return { message: plain, recipients };
}

/**
 * For each `{{var|fallback}}` of a message, how many of the recipients have no value for `var` (and so
 * get the fallback): what Review says before a send.
 */
export function fallbackUses(
  message: string,
  phones: readonly string[],
  variables: Readonly<Record<string, Readonly<Record<string, string>> | undefined>>,
): { name: string; fallback: string; count: number }[] {
  return [...fallbacksIn(message)]
    .map(([name, fallback]) => ({
      name,
      fallback,
      count: phones.reduce((n, phone) => (hasValue(variables[phone]?.[name]) ? n : n + 1), 0),
    }))
    .filter((u) => u.count > 0);
}

/** The text one recipient gets: `{{var|fallback}}` as the recipient's value, or the fallback where it has none. */
export function withFallbacks(message: string, values: Readonly<Record<string, string>>): string {
  return message.replace(WITH_FALLBACK, (_whole, name: string, fallback: string) =>
    hasValue(values[name]) ? values[name]! : fallback.trim(),
  );
}
