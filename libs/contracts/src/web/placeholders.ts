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
  return placeholderFiller(message)(variables);
}

/**
 * `fillPlaceholders` for one message and many recipients: the message is split at its placeholders
 * once, and each recipient's text is its pieces joined (a 50,000-row start fills 50,000 texts).
 */
export function placeholderFiller(message: string): (variables: Readonly<Record<string, string>>) => string {
  // Triples: the text before a placeholder, its name, the placeholder as typed.
  const pieces: string[] = [];
  let last = 0;
  for (const match of message.matchAll(PLACEHOLDER)) {
    pieces.push(message.slice(last, match.index), match[1]!, match[0]);
    last = match.index + match[0].length;
  }
  const tail = message.slice(last);
  if (pieces.length === 0) return () => message;
  return (variables) => {
    let text = '';
    for (let i = 0; i < pieces.length; i += 3) {
      const name = pieces[i + 1]!;
      text += pieces[i]! + (Object.hasOwn(variables, name) ? variables[name]! : pieces[i + 2]!);
    }
    return text + tail;
  };
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
