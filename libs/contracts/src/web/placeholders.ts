/** `{{name}}`-style placeholders of a personalised message (word characters, optional spaces inside). */
const PLACEHOLDER = /\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}/g;

/** The distinct variable names a message uses, in order of first use. */
export function placeholdersIn(message: string): string[] {
  const names: string[] = [];
  for (const match of message.matchAll(PLACEHOLDER)) if (!names.includes(match[1]!)) names.push(match[1]!);
  return names;
}

/** The message with each placeholder replaced by the recipient's value; unknown ones are left as typed. */
export function fillPlaceholders(message: string, variables: Readonly<Record<string, string>>): string {
  return message.replace(PLACEHOLDER, (whole, name: string) =>
    Object.hasOwn(variables, name) ? variables[name]! : whole,
  );
}

/** A column title as a variable name: lower case, spaces and punctuation to underscores ("First Name" → first_name). */
export function variableNameOf(title: string): string {
  const name = title
    .trim()
    .toLowerCase()
    .replace(/[^a-z0-9_]+/g, '_')
    .replace(/^_+|_+$/g, '');
  return /^[a-z_]/.test(name) ? name : `_${name}`;
}
