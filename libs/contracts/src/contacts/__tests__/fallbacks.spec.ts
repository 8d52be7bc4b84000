import { describe, expect, it } from '@jest/globals';
import { fillPlaceholders } from '../../web/placeholders.js';
import { applyFallbacks, fallbackUses, withFallbacks } from '../fallbacks.js';

describe('{{var|fallback}}', () => {
  it('counts, per fallback, the recipients that have no value and so get it', () => {
    const uses = fallbackUses('Hi {{name|customer}}, {{city|Hong Kong}} {{name|x}}', ['1', '2', '3'], {
      '1': { name: 'Ann', city: '' },
      '2': { name: '  ' },
    });
    expect(uses).toEqual([
      { name: 'name', fallback: 'customer', count: 2 },
      { name: 'city', fallback: 'Hong Kong', count: 3 },
    ]);
    expect(fallbackUses('Hi {{name}}', ['1'], {})).toEqual([]);
  });

  it('previews the text a recipient gets as the server fills it', () => {
    const message = 'Hi {{name|customer}}, order {{order}}';
    for (const values of [{ name: 'Ann', order: '7' }, { order: '8' }, { name: '', order: '9' }]) {
      const server = applyFallbacks(message, { recipients: [{ phone: '91234567', variables: values }] });
      const filled = (server.recipients![0] as { variables: Record<string, string> }).variables;
      expect(fillPlaceholders(withFallbacks(message, values), values)).toBe(fillPlaceholders(server.message, filled));
    }
  });
});
