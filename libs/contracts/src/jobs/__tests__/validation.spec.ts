import { describe, expect, it } from '@jest/globals';
import { LIMITS } from '../../common/limits.js';
import { MESSAGES } from '../../common/messages.js';
import { checkWith, REQUEST_MESSAGES } from '../../common/schema.js';
import { JobsErrorCode } from '../errors.js';
import { JOB_MESSAGES } from '../messages.js';
import { checkStartBody, StartJobHttpBodySchema } from '../schemas.js';
import { checkStartJob, parseSince, type StartJobCheck } from '../validation.js';

function refusal(check: StartJobCheck) {
  if (check.ok) throw new Error('expected a refusal');
  return check;
}
function accepted(check: StartJobCheck) {
  if (!check.ok) throw new Error(`expected acceptance, got ${check.message}`);
  return check;
}

describe('checkStartJob: the spec words', () => {
  it('an empty or blank message: "Please enter a message first"', () => {
    for (const message of [undefined, '', '   ', 42]) {
      const r = refusal(checkStartJob({ message, phoneNumbers: ['91234567'] }));
      expect(r.message).toBe(MESSAGES.enterMessageFirst);
      expect(r.code).toBe(JobsErrorCode.MessageRequired);
    }
  });

  it('no numbers: "Please add phone numbers first" (blank rows do not count)', () => {
    for (const phoneNumbers of [undefined, [], ['', '  ', null]]) {
      const r = refusal(checkStartJob({ message: 'Hi', phoneNumbers }));
      expect(r.message).toBe(MESSAGES.addPhoneNumbersFirst);
    }
  });

  it('a message over 1000 characters is refused with a clear message', () => {
    const r = refusal(checkStartJob({ message: 'x'.repeat(LIMITS.messageMaxLength + 1), phoneNumbers: ['91234567'] }));
    expect(r.code).toBe(JobsErrorCode.MessageTooLong);
    expect(r.message).toBe('Message must be 1000 characters or less');
    accepted(checkStartJob({ message: 'x'.repeat(LIMITS.messageMaxLength), phoneNumbers: ['91234567'] }));
  });

  it('numbers that are not 8 digits are listed in "Invalid phone numbers: ..."', () => {
    const r = refusal(checkStartJob({ message: 'Hi', phoneNumbers: ['91234567', '1234', 'abcdefgh', '912345678'] }));
    expect(r.code).toBe(JobsErrorCode.InvalidPhoneNumbers);
    expect(r.message.startsWith(`${MESSAGES.invalidPhoneNumbersPrefix}1234, abcdefgh, 912345678.`)).toBe(true);
    expect(r.details).toEqual({ invalid: ['1234', 'abcdefgh', '912345678'] });
  });

  it('a long invalid list is cut after 10 with "and N more"', () => {
    const bad = Array.from({ length: 13 }, (_, i) => String(100 + i));
    const r = refusal(checkStartJob({ message: 'Hi', phoneNumbers: bad }));
    expect(r.message).toBe(
      'Invalid phone numbers: 100, 101, 102, 103, 104, 105, 106, 107, 108, 109 and 3 more. Hong Kong numbers have exactly 8 digits (852 or +852 in front is fine)',
    );
  });

  it('more than the maximum of recipients is refused', () => {
    const numbers = ['91234567', '91234568', '91234569'];
    const r = refusal(checkStartJob({ message: 'Hi', phoneNumbers: numbers }, { maxRecipients: 2 }));
    expect(r.code).toBe(JobsErrorCode.TooManyRecipients);
    expect(r.message).toBe('A job can have at most 2 recipients');
    expect(JOB_MESSAGES.tooManyRecipients(50_000)).toBe('A job can have at most 50,000 recipients');
  });

  it('lists that are not lists are refused, not crashed on', () => {
    expect(refusal(checkStartJob({ message: 'Hi', phoneNumbers: '91234567' })).code).toBe(
      JobsErrorCode.InvalidRecipients,
    );
    expect(refusal(checkStartJob({ message: 'Hi', recipients: 'x' })).code).toBe(JobsErrorCode.InvalidRecipients);
    expect(refusal(checkStartJob({ message: 'Hi', recipients: [42] })).code).toBe(JobsErrorCode.InvalidRecipients);
    expect(refusal(checkStartJob({ message: 'Hi', recipients: [{ phone: '91234567', variables: [] }] })).code).toBe(
      JobsErrorCode.InvalidRecipients,
    );
    expect(refusal(checkStartJob(null)).code).toBe(JobsErrorCode.MessageRequired);
  });
});

describe('checkStartJob: numbers', () => {
  it('strips 852 / +852 and separators, merges duplicates keeping first-seen order', () => {
    const r = accepted(
      checkStartJob({
        message: 'Hi',
        phoneNumbers: ['9123 4567', '+85291234567', '852-6123-4567', 61234567, '51234567', '85212345'],
      }),
    );
    expect(r.recipients.map((x) => x.phone)).toEqual(['91234567', '61234567', '51234567', '85212345']);
    expect(r.duplicatesMerged).toBe(2);
    expect(r.personalised).toBe(false);
    expect(r.recipients.every((x) => x.text === 'Hi')).toBe(true);
  });
});

describe('checkStartJob: personalisation', () => {
  it('fills {{name}} per recipient', () => {
    const r = accepted(
      checkStartJob({
        message: 'Hello {{name}}, your code is {{ code }}',
        recipients: [
          { phone: '91234567', variables: { name: 'Ann', code: 7 } },
          { phone: '+85261234567', variables: { name: 'Bob', code: 'X1' } },
        ],
      }),
    );
    expect(r.personalised).toBe(true);
    expect(r.recipients).toEqual([
      { phone: '91234567', text: 'Hello Ann, your code is 7', variables: { name: 'Ann', code: '7' } },
      { phone: '61234567', text: 'Hello Bob, your code is X1', variables: { name: 'Bob', code: 'X1' } },
    ]);
  });

  it('a placeholder without a value names the variable and the rows', () => {
    const r = refusal(
      checkStartJob({
        message: 'Hi {{name}}',
        recipients: [
          { phone: '91234567', variables: { name: 'Ann' } },
          { phone: '91234568', variables: { name: '  ' } },
          { phone: '91234569' },
        ],
      }),
    );
    expect(r.code).toBe(JobsErrorCode.MissingVariable);
    expect(r.message).toBe('Placeholder {{name}} has no value in rows 2, 3');
    expect(r.details).toEqual({ variable: 'name', rows: [2, 3] });
  });

  it('rows are named by the spreadsheet row the web sent, not by position', () => {
    const r = refusal(
      checkStartJob({
        message: 'Hi {{name}}',
        recipients: [
          { phone: '91234567', variables: { name: 'Ann' }, row: 2 },
          // Sheet row 3 had no phone and was skipped by the web; row 4 has a blank name.
          { phone: '91234568', variables: { name: '' }, row: 4 },
          { phone: '91234569', variables: { name: 'Cat' }, row: 5 },
          { phone: '91234560', row: 7 },
        ],
      }),
    );
    expect(r.message).toBe('Placeholder {{name}} has no value in rows 4, 7');
    expect(r.details).toEqual({ variable: 'name', rows: [4, 7] });
  });

  it('a row that is not a positive whole number falls back to the position', () => {
    for (const row of [0, -1, 2.5, '4', null]) {
      const r = refusal(
        checkStartJob({
          message: 'Hi {{name}}',
          recipients: [
            { phone: '91234567', variables: { name: 'Ann' } },
            { phone: '91234568', row },
          ],
        }),
      );
      expect(r.message).toBe('Placeholder {{name}} has no value in row 2');
    }
  });

  it('placeholders with plain phone numbers have no values', () => {
    const r = refusal(checkStartJob({ message: 'Hi {{name}}', phoneNumbers: ['91234567'] }));
    expect(r.message).toBe('Placeholder {{name}} has no value in row 1');
  });

  it('a text over the limit once filled is refused with its rows', () => {
    const r = refusal(
      checkStartJob({
        message: 'x{{long}}',
        recipients: [{ phone: '91234567', variables: { long: 'y'.repeat(LIMITS.messageMaxLength) } }],
      }),
    );
    expect(r.code).toBe(JobsErrorCode.RenderedTooLong);
    expect(r.message).toBe('The personalised message is over 1000 characters in row 1');
  });

  it('a duplicate number keeps its first row and variables', () => {
    const r = accepted(
      checkStartJob({
        message: 'Hi {{name}}',
        recipients: [
          { phone: '91234567', variables: { name: 'Ann' } },
          { phone: '85291234567', variables: { name: 'Other' } },
        ],
      }),
    );
    expect(r.recipients).toEqual([{ phone: '91234567', text: 'Hi Ann', variables: { name: 'Ann' } }]);
  });
});

describe('checkStartJob: text that shows nothing or is not text', () => {
  const one = (message: unknown) => checkStartJob({ message, phoneNumbers: ['91234567'] });

  it('a message of only invisible characters is blank: "Please enter a message first"', () => {
    for (const message of [
      '\u200b\u200b',
      '\u200d',
      '\u200c\u200d',
      '\u2060',
      '\ufeff',
      ' \u200b\n\u3164\u2800 ',
      '\u180e\u00ad',
      '\u{E0020}',
    ]) {
      const r = refusal(one(message));
      expect({ message, text: r.message, code: r.code }).toEqual({
        message,
        text: JOB_MESSAGES.enterMessageFirst,
        code: JobsErrorCode.MessageRequired,
      });
    }
    // Visible text with invisible characters in it is fine, and so is an emoji made of a ZWJ sequence.
    accepted(one('Hi\u200bthere'));
    accepted(one('\u{1F468}\u200d\u{1F469}\u200d\u{1F467}'));
  });

  it('a variable of only invisible characters has no value: the placeholder names its row', () => {
    const r = refusal(
      checkStartJob({
        message: 'Hi {{name}}',
        recipients: [{ phone: '91234567', variables: { name: '\u200b\u2060' } }],
      }),
    );
    expect(r.code).toBe(JobsErrorCode.MissingVariable);
    expect(r.message).toBe('Placeholder {{name}} has no value in row 1');
  });

  it('a lone UTF-16 surrogate in the message, a variable value or a variable name is refused in plain words', () => {
    expect(refusal(one('a\ud800b'))).toMatchObject({
      code: JobsErrorCode.InvalidField,
      message: 'message contains characters that are not valid text',
    });
    expect(refusal(one('a\udc00'))).toMatchObject({
      code: JobsErrorCode.InvalidField,
      message: REQUEST_MESSAGES.invalidText('message'),
    });
    const value = checkStartJob({
      message: 'Hi {{name}}',
      recipients: [{ phone: '91234567', variables: { name: 'A\ud83d' } }],
    });
    expect(refusal(value)).toMatchObject({
      code: JobsErrorCode.InvalidField,
      message: REQUEST_MESSAGES.invalidText('variables'),
    });
    const name = checkStartJob({ message: 'Hi', recipients: [{ phone: '91234567', variables: { ['n\udfff']: 'x' } }] });
    expect(refusal(name)).toMatchObject({
      code: JobsErrorCode.InvalidField,
      message: REQUEST_MESSAGES.invalidText('variables'),
    });
    const nulName = checkStartJob({
      message: 'Hi',
      recipients: [{ phone: '91234567', variables: { ['n\u0000']: 'x' } }],
    });
    expect(refusal(nulName)).toMatchObject({
      code: JobsErrorCode.InvalidField,
      message: REQUEST_MESSAGES.nulCharacter('variables'),
    });
    // A pair is a character like any other.
    expect(accepted(one('Hi \ud83d\ude00')).recipients[0]!.text).toBe('Hi \u{1F600}');
  });
});

describe('checkStartJob: variable values', () => {
  it('takes text, finite numbers, booleans and null as they are, and refuses a list, an object, NUL and lone surrogates', () => {
    const ok = accepted(
      checkStartJob({
        message: 'Hi {{t}}',
        recipients: [{ phone: '91234567', variables: { t: 'Ann', n: 3.5, z: 0, b: false, none: null } }],
      }),
    );
    expect(ok.recipients[0]!.variables).toEqual({ t: 'Ann', n: '3.5', z: '0', b: 'false' });
    for (const [value, message] of [
      [['a'], JOB_MESSAGES.recipientsNotAList],
      [{ a: 1 }, JOB_MESSAGES.recipientsNotAList],
      ['a\u0000b', REQUEST_MESSAGES.nulCharacter('variables')],
      ['a\ud800', REQUEST_MESSAGES.invalidText('variables')],
    ] as const) {
      const r = refusal(checkStartJob({ message: 'Hi', recipients: [{ phone: '91234567', variables: { v: value } }] }));
      expect({ value, message: r.message }).toEqual({ value, message });
    }
  });
});

describe('checkStartJob: one list', () => {
  it('phoneNumbers and recipients both non-empty: "Send either phoneNumbers or recipients, not both"', () => {
    const r = refusal(
      checkStartJob({ message: 'Hi', phoneNumbers: ['91234567'], recipients: [{ phone: '61234567' }] }),
    );
    expect(r.code).toBe(JobsErrorCode.PhoneNumbersAndRecipients);
    expect(r.message).toBe('Send either phoneNumbers or recipients, not both');
    // An empty (or absent) other list is no conflict.
    expect(
      accepted(checkStartJob({ message: 'Hi', phoneNumbers: [], recipients: [{ phone: '61234567' }] })).recipients,
    ).toHaveLength(1);
    expect(
      accepted(checkStartJob({ message: 'Hi', phoneNumbers: ['91234567'], recipients: [] })).recipients,
    ).toHaveLength(1);
    expect(
      accepted(checkStartJob({ message: 'Hi', phoneNumbers: ['91234567'], recipients: null })).recipients,
    ).toHaveLength(1);
  });
});

describe('checkStartJob: variable names are keys, whatever they are called', () => {
  // As the gateway and the jobs service receive it: JSON.parse makes `__proto__` an own key.
  const body = () =>
    JSON.parse(
      '{"message":"Hi {{__proto__}}, {{constructor}}","recipients":[{"phone":"91234567","variables":{"__proto__":"x","constructor":"c"}}]}',
    ) as unknown;

  it('fills {{__proto__}} and {{constructor}} from the values given', () => {
    const r = accepted(checkStartJob(body()));
    expect(r.recipients[0]!.text).toBe('Hi x, c');
    const variables = r.recipients[0]!.variables!;
    expect(Object.getPrototypeOf(variables)).toBeNull();
    expect(Object.keys(variables)).toEqual(['__proto__', 'constructor']);
    expect(JSON.stringify(variables)).toBe('{"__proto__":"x","constructor":"c"}');
  });

  it('keeps them through the gateway: its parsed body, forwarded as JSON, is checked the same', () => {
    const parsed = checkWith(StartJobHttpBodySchema, body());
    if (!parsed.ok) throw new Error(parsed.message);
    expect(JSON.stringify(parsed.value.recipients)).toBe(
      '[{"phone":"91234567","variables":{"__proto__":"x","constructor":"c"}}]',
    );
    expect(accepted(checkStartJob(JSON.parse(JSON.stringify(parsed.value)))).recipients[0]!.text).toBe('Hi x, c');
  });

  it('a name only the prototype has is still no value', () => {
    const r = refusal(
      checkStartJob({ message: 'Hi {{toString}}', recipients: [{ phone: '91234567', variables: { name: 'Ann' } }] }),
    );
    expect(r.message).toBe('Placeholder {{toString}} has no value in row 1');
  });
});

describe('checkStartJob: variables have size limits', () => {
  const columns = (n: number, prefix = 'c') =>
    Object.fromEntries(Array.from({ length: n }, (_, i) => [`${prefix}${i}`, 'v']));

  it(`at most ${LIMITS.variablesPerJobMax} different names in the whole job`, () => {
    accepted(
      checkStartJob({
        message: 'Hi',
        recipients: [{ phone: '91234567', variables: columns(LIMITS.variablesPerJobMax) }],
      }),
    );
    // 30 names in one row and 30 others in the next: 60 in all.
    const r = refusal(
      checkStartJob({
        message: 'Hi',
        recipients: [
          { phone: '91234567', variables: columns(30, 'a') },
          { phone: '91234568', variables: columns(30, 'b') },
        ],
      }),
    );
    expect(r.code).toBe(JobsErrorCode.TooManyVariables);
    expect(r.message).toBe(
      'A job can have at most 50 different variables (spreadsheet columns); these recipients have 60',
    );
    expect(r.details).toEqual({ max: 50, count: 60 });
    // Names without a value are not stored, so they do not count.
    accepted(
      checkStartJob({
        message: 'Hi',
        recipients: [
          {
            phone: '91234567',
            variables: { ...columns(50), ...Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`e${i}`, ' '])) },
          },
        ],
      }),
    );
  });

  it(`a name of at most ${LIMITS.variableNameMaxLength} characters; longer ones name their rows`, () => {
    const long = 'n'.repeat(LIMITS.variableNameMaxLength + 1);
    accepted(
      checkStartJob({
        message: 'Hi',
        recipients: [{ phone: '91234567', variables: { ['n'.repeat(LIMITS.variableNameMaxLength)]: 'x' } }],
      }),
    );
    const r = refusal(
      checkStartJob({
        message: 'Hi',
        recipients: [
          { phone: '91234567', variables: { name: 'Ann' }, row: 2 },
          { phone: '91234568', variables: { [long]: 'x' }, row: 3 },
          { phone: '91234569', variables: { [long]: 'y' }, row: 5 },
        ],
      }),
    );
    expect(r.code).toBe(JobsErrorCode.VariableNameTooLong);
    expect(r.message).toBe('A variable name is over 64 characters in rows 3, 5');
    expect(r.details).toEqual({ max: 64, rows: [3, 5] });
  });

  it(`a value of at most ${LIMITS.messageMaxLength} characters, also when the message does not use it`, () => {
    accepted(
      checkStartJob({
        message: 'Hi',
        recipients: [{ phone: '91234567', variables: { notes: 'x'.repeat(LIMITS.messageMaxLength) } }],
      }),
    );
    const r = refusal(
      checkStartJob({
        message: 'Hi {{name}}',
        recipients: [
          { phone: '91234567', variables: { name: 'Ann', notes: 'x'.repeat(20_000) } },
          { phone: '91234568', variables: { name: 'Bob', notes: 'short' } },
          { phone: '91234569', variables: { name: 'Cat', notes: 'y'.repeat(LIMITS.messageMaxLength + 1) } },
        ],
      }),
    );
    expect(r.code).toBe(JobsErrorCode.VariableTooLong);
    expect(r.message).toBe('The value of "notes" is over 1000 characters in rows 1, 3');
    expect(r.details).toEqual({ variable: 'notes', max: 1000, rows: [1, 3] });
  });

  it("keeps each row's variables with a value for the report, and none for rows without", () => {
    const r = accepted(
      checkStartJob({
        message: 'Hi',
        recipients: [
          { phone: '91234567', variables: { name: 'Ann', blank: '', none: null, n: 3 } },
          { phone: '91234568' },
          { phone: '91234569', variables: { x: ' ' } },
        ],
      }),
    );
    expect(r.recipients.map((p) => p.variables)).toEqual([{ name: 'Ann', n: '3' }, undefined, undefined]);
  });
});

describe('a start body checked without zod for its plain recipients', () => {
  // Small pseudo-random generator: the same cases every run.
  let seed = 7;
  const rand = (n: number) => {
    // mulberry32
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), seed | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) % n;
  };
  const pick = <T>(xs: readonly T[]): T => xs[rand(xs.length)]!;
  const phones: unknown[] = ['91234567', '+852 9123 4567', 91234568, null, '', '  ', 'abc', [], {}, true, 1.5];
  const values: unknown[] = [
    'Ann',
    '',
    '  ',
    '\u200b',
    0,
    -2.5,
    true,
    false,
    null,
    'a\u0000b',
    '\ud800x',
    [],
    {},
    { a: 1 },
  ];
  const names = ['name', 'code', '__proto__', 'constructor', 'x'.repeat(70), 'n\u0000', '\udc00', ''];
  const variables = (): unknown => {
    const kind = rand(12);
    if (kind === 0) return null;
    if (kind === 1) return undefined;
    if (kind === 2) return ['not', 'an', 'object'];
    if (kind === 3) return 'text';
    const v: Record<string, unknown> = {};
    for (let k = rand(4); k > 0; k--)
      Object.defineProperty(v, pick(names), {
        value: pick(values),
        enumerable: true,
        configurable: true,
        writable: true,
      });
    return v;
  };
  const recipient = (): unknown => {
    const kind = rand(25);
    if (kind === 0) return null;
    if (kind === 1) return '91234567';
    if (kind === 2) return [];
    const r: Record<string, unknown> = { phone: pick(phones) };
    if (rand(3) > 0) r.variables = variables();
    if (rand(4) === 0) r.row = pick([2, 0, 'x', null, 7.5]);
    if (rand(6) === 0) r.extra = 'ignored';
    if (rand(10) === 0) delete r.phone;
    return r;
  };
  const messages: unknown[] = ['Hi {{name}}', '', '   ', 'x'.repeat(1001), 42, 'Hello'];

  it('answers exactly what the schema answers, accepted or refused, words and field included', () => {
    let plainAccepted = 0;
    for (let n = 0; n < 3000; n++) {
      // Most lists are clean (the fast path's case), some carry one odd entry or an odd rest of the body.
      const clean = rand(3) > 0;
      const length = 2 + rand(6);
      const recipients: unknown[] = Array.from({ length }, () => ({
        phone: String(91000000 + rand(1000)),
        variables: { name: pick(['Ann', 'Bo', 7, true]) },
      }));
      // One odd entry among plain ones: the fast path's edge.
      if (!clean) recipients[rand(length)] = recipient();
      const body: Record<string, unknown> = { message: rand(5) > 0 ? 'Hi {{name}}' : pick(messages), recipients };
      if (rand(8) === 0) body.phoneNumbers = rand(2) ? ['91234567'] : [];
      if (rand(8) === 0) body.clientId = pick(['crm-1', 7, 'x'.repeat(300)]);
      if (rand(10) === 0) body.startAt = pick(['2030-01-01T00:00:00Z', 5]);
      const expected = checkWith(StartJobHttpBodySchema, body);
      expect(checkStartBody(body)).toEqual(expected);
      if (expected.ok && clean) plainAccepted++;
    }
    // The comparison covered the fast path, not only its fallback.
    expect(plainAccepted).toBeGreaterThan(400);
  });

  it('keeps a name like __proto__ as a key, as the schema does', () => {
    const body = JSON.parse(
      '{"message":"Hi {{__proto__}}","recipients":[{"phone":"91234567","variables":{"__proto__":"Ann"}},{"phone":"91234568","variables":{"__proto__":"Bo"}}]}',
    ) as unknown;
    const fast = checkStartBody(body);
    expect(fast).toEqual(checkWith(StartJobHttpBodySchema, body));
    expect(accepted(checkStartJob(body)).recipients.map((r) => r.text)).toEqual(['Hi Ann', 'Hi Bo']);
  });
});

describe('parseSince', () => {
  it('takes ISO and epoch milliseconds; refuses the rest', () => {
    expect(parseSince(undefined)).toBeUndefined();
    expect(parseSince('')).toBeUndefined();
    expect(parseSince('2025-01-02T03:04:05.678Z')?.toISOString()).toBe('2025-01-02T03:04:05.678Z');
    expect(parseSince('1735787045678')?.toISOString()).toBe('2025-01-02T03:04:05.678Z');
    expect(parseSince('yesterday')).toBeNull();
    expect(parseSince({})).toBeNull();
  });
});

describe('job log texts', () => {
  it('words the unlinked timeout in minutes or seconds', () => {
    expect(JOB_MESSAGES.unlinkedTooLong(600_000)).toBe(
      'WhatsApp stayed disconnected for 10 minutes; the job was stopped',
    );
    expect(JOB_MESSAGES.unlinkedTooLong(60_000)).toBe('WhatsApp stayed disconnected for 1 minute; the job was stopped');
    expect(JOB_MESSAGES.unlinkedTooLong(4000)).toBe('WhatsApp stayed disconnected for 4 seconds; the job was stopped');
  });
});
