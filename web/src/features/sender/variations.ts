import { variationAt } from '@bns/contracts';

/** `{Hello|Hi|Hey}` as the jobs service reads it: contracts' `variationAt`, next to its `pickVariation`. */
export { variationAt };

/** What previews show: the first option of each variation, the same text every time it is drawn. */
export function firstVariation(message: string): string {
  return variationAt(message, 0);
}
