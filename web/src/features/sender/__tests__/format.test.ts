import { describe, expect, it } from 'vitest';
import { formatMessage } from '../format.js';

describe('formatMessage (*bold*, _italic_, links)', () => {
  it('makes *x* bold and _x_ italic', () => {
    expect(formatMessage('Hi *Ann*, _welcome_!')).toEqual([
      'Hi ',
      { kind: 'bold', children: ['Ann'] },
      ', ',
      { kind: 'italic', children: ['welcome'] },
      '!',
    ]);
  });

  it('nests italic inside bold', () => {
    expect(formatMessage('*_big sale_*')).toEqual([
      { kind: 'bold', children: [{ kind: 'italic', children: ['big sale'] }] },
    ]);
  });

  it('leaves markers inside words and with inner spaces alone', () => {
    expect(formatMessage('2*3*4 snake_case_name * not bold *')).toEqual(['2*3*4 snake_case_name * not bold *']);
  });

  it('turns URLs into links, and an underscore in a URL stays part of it', () => {
    expect(formatMessage('Book at https://shop.hk/a_b_c. Or www.shop.hk')).toEqual([
      'Book at ',
      { kind: 'link', href: 'https://shop.hk/a_b_c', text: 'https://shop.hk/a_b_c' },
      '. Or ',
      { kind: 'link', href: 'https://www.shop.hk', text: 'www.shop.hk' },
    ]);
  });

  it('keeps line breaks and formats each line', () => {
    expect(formatMessage('*Sale*\n_today_')).toEqual([
      { kind: 'bold', children: ['Sale'] },
      '\n',
      { kind: 'italic', children: ['today'] },
    ]);
  });

  it('does not join markers across lines', () => {
    expect(formatMessage('*start\nend*')).toEqual(['*start\nend*']);
  });
});
