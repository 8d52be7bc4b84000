import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { LIMITS } from '@bns/contracts';
import { rows } from '@bns/service-kit';
import { inProcess, type InProcess } from '../../__tests__/in-process.js';
import { PHONE_NUMBERS_CHECK, CATEGORY_CHECK, TemplateEntity } from '../../templates/template.entity.js';

/**
 * One set of numbers: the form's limits (LIMITS), the entity's column lengths and checks, and the
 * table the migrations made. Changing a limit fails this test until a migration changes the table.
 */

let app: InProcess;

beforeAll(async () => {
  app = await inProcess([]);
}, 60_000);

afterAll(() => app?.stop());

const LENGTHS = {
  name: LIMITS.templateNameMax,
  description: LIMITS.templateDescriptionMax,
  message_content: LIMITS.templateMessageMax,
};

describe('templates table and LIMITS', () => {
  it('the entity takes its lengths and checks from LIMITS', () => {
    const metadata = app.db.getMetadata(TemplateEntity);
    for (const [column, max] of Object.entries(LENGTHS))
      expect([column, metadata.findColumnWithDatabaseName(column)?.length]).toEqual([column, String(max)]);
    expect(metadata.checks.map((c) => [c.name, c.expression]).sort()).toEqual(
      [
        [CATEGORY_CHECK.name, CATEGORY_CHECK.clause],
        [PHONE_NUMBERS_CHECK.name, PHONE_NUMBERS_CHECK.clause],
      ].sort(),
    );
    expect(PHONE_NUMBERS_CHECK.clause).toBe(`cardinality(phone_numbers) <= ${LIMITS.templatePhoneNumbersMax}`);
  });

  it('the migrated table has the same lengths, the same checks, and the columns of the entity', async () => {
    const columns = await rows<{ column_name: string; character_maximum_length: number | null }>(
      app.db.manager,
      `SELECT column_name, character_maximum_length FROM information_schema.columns WHERE table_schema = 'templates' AND table_name = 'templates'`,
    );
    const metadata = app.db.getMetadata(TemplateEntity);
    expect(columns.map((c) => c.column_name).sort()).toEqual(metadata.columns.map((c) => c.databaseName).sort());
    for (const [column, max] of Object.entries(LENGTHS)) {
      expect([column, columns.find((c) => c.column_name === column)?.character_maximum_length]).toEqual([column, max]);
    }
    const checks = await rows<{ conname: string }>(
      app.db.manager,
      `SELECT conname FROM pg_constraint WHERE conrelid = 'templates.templates'::regclass AND contype = 'c'`,
    );
    expect(checks.map((c) => c.conname)).toEqual(
      expect.arrayContaining([PHONE_NUMBERS_CHECK.name, CATEGORY_CHECK.name]),
    );
  });

  it('the table takes exactly the limits and refuses one more', async () => {
    const repo = app.db.getRepository(TemplateEntity);
    const base = { user_id: 'limits', name: 'n', message_content: 'm' };
    const numbers = (n: number) => Array.from({ length: n }, (_, i) => String(85_210_000_000 + i));
    await repo.insert({
      ...base,
      name: 'n'.repeat(LIMITS.templateNameMax),
      description: 'd'.repeat(LIMITS.templateDescriptionMax),
      message_content: 'm'.repeat(LIMITS.templateMessageMax),
      phone_numbers: numbers(LIMITS.templatePhoneNumbersMax),
    });
    await expect(repo.insert({ ...base, name: 'n'.repeat(LIMITS.templateNameMax + 1) })).rejects.toMatchObject({
      code: '22001',
    });
    await expect(
      repo.insert({ ...base, description: 'd'.repeat(LIMITS.templateDescriptionMax + 1) }),
    ).rejects.toMatchObject({ code: '22001' });
    await expect(
      repo.insert({ ...base, message_content: 'm'.repeat(LIMITS.templateMessageMax + 1) }),
    ).rejects.toMatchObject({ code: '22001' });
    await expect(
      repo.insert({ ...base, phone_numbers: numbers(LIMITS.templatePhoneNumbersMax + 1) }),
    ).rejects.toMatchObject({
      code: '23514',
      constraint: PHONE_NUMBERS_CHECK.name,
    });
    await expect(repo.insert({ ...base, category: 'spam' as never })).rejects.toMatchObject({
      code: '23514',
      constraint: CATEGORY_CHECK.name,
    });
  });
});
