import { describe, expect, it } from 'vitest';
import { pickVariation, variantCount } from '@bns/contracts';
import { firstVariation, variationAt } from '../variations.js';

describe('message variations ({A|B}) in previews', () => {
  it('shows the first option of each, leaving {{placeholders}} and plain braces alone', () => {
    expect(firstVariation('{Hi|Hey} {{name}}, {see you|bye}! {x}')).toBe('Hi {{name}}, see you! {x}');
    expect(variationAt('{Hi|Hey|Hello} there {a|b}', 2)).toBe('Hello there a');
    expect(firstVariation('No options here')).toBe('No options here');
  });

  it('reads variations as the jobs service does: the preview is one of the texts a recipient can get', () => {
    for (const message of ['{Hi|Hey} {{name}}', '{A|B|C} and {1|2}', '{only one}', 'a {|empty} b']) {
      const sent = new Set(Array.from({ length: 200 }, (_, i) => pickVariation(message, `job:${i}`)));
      expect(sent.has(firstVariation(message))).toBe(true);
      expect(sent.size).toBeLessThanOrEqual(variantCount(message));
    }
  });
});
