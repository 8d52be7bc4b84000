/**
 * `{Hello|Hi|Hey}` as the jobs service reads it (contracts' `pickVariation`, which picks one option per
 * recipient): a `{…}` holding a `|` and no braces; `{{name}}` placeholders are left alone.
 */
const VARIATION = /\{([^{}]*\|[^{}]*)\}/g;

/** The message with option `index` of each variation (wrapping round a shorter one): 0 is the first. */
export function variationAt(message: string, index: number): string {
  return message.replace(VARIATION, (_whole, body: string) => {
    const options = body.split('|');
    return options[index % options.length]!;
  });
}

/** What previews show: the first option of each variation, the same text every time it is drawn. */
export function firstVariation(message: string): string {
  return variationAt(message, 0);
}
