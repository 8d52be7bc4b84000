import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { LIMITS } from '@bns/contracts';
import { rows } from '@bns/service-kit';
import { MessageEntity } from '../../projection/entities/message.entity.js';
import { inProcess, type InProcess } from '../../__tests__/in-process.js';
import { DASHBOARD_DATABASE } from '../data-source.js';

/** The entities describe the tables the migrations make: same tables, same columns, same nullability. */

let app: InProcess;

beforeAll(async () => {
  app = await inProcess([]);
}, 60_000);

afterAll(() => app?.stop());

interface ColumnRow {
  table_name: string;
  column_name: string;
  is_nullable: 'YES' | 'NO';
}

describe('dashboard schema', () => {
  it('every table has an entity, and every entity column is a column of its table', async () => {
    const columns = await rows<ColumnRow>(
      app.db.manager,
      `SELECT table_name, column_name, is_nullable FROM information_schema.columns WHERE table_schema = $1 AND table_name <> $2`,
      [DASHBOARD_DATABASE.schema, `${DASHBOARD_DATABASE.schema}_migrations`],
    );
    const tables = new Map<string, Map<string, boolean>>();
    for (const c of columns) {
      const t = tables.get(c.table_name) ?? new Map<string, boolean>();
      t.set(c.column_name, c.is_nullable === 'YES');
      tables.set(c.table_name, t);
    }
    const entities = app.db.entityMetadatas;
    expect(entities.map((e) => e.tableName).sort()).toEqual([...tables.keys()].sort());
    for (const entity of entities) {
      const described = new Map(entity.columns.map((c) => [c.databaseName, c.isNullable]));
      expect([entity.tableName, described]).toEqual([entity.tableName, tables.get(entity.tableName)]);
    }
  });

  it("a reply's preview is LIMITS.replyPreviewMax characters in the entity and in the migrated table", async () => {
    expect(app.db.getMetadata(MessageEntity).findColumnWithDatabaseName('reply')?.length).toBe(
      String(LIMITS.replyPreviewMax),
    );
    const [column] = await rows<{ character_maximum_length: number }>(
      app.db.manager,
      `SELECT character_maximum_length FROM information_schema.columns WHERE table_schema = 'dashboard' AND table_name = 'messages' AND column_name = 'reply'`,
    );
    expect(column?.character_maximum_length).toBe(LIMITS.replyPreviewMax);
  });

  it('the replies, retention and job-skips migrations revert and apply again', async () => {
    await app.db.undoLastMigration({ transaction: 'each' });
    const skipsTable = () =>
      rows<{ table_name: string }>(
        app.db.manager,
        `SELECT table_name FROM information_schema.tables WHERE table_schema = 'dashboard' AND table_name = 'job_skips'`,
      );
    expect(await skipsTable()).toEqual([]);
    await app.db.undoLastMigration({ transaction: 'each' });
    await app.db.undoLastMigration({ transaction: 'each' });
    const columns = await rows<{ column_name: string }>(
      app.db.manager,
      `SELECT column_name FROM information_schema.columns WHERE table_schema = 'dashboard' AND table_name = 'messages' AND column_name IN ('reply', 'replied_at')`,
    );
    expect(columns).toEqual([]);
    expect((await app.db.runMigrations({ transaction: 'each' })).map((m) => m.name)).toEqual([
      'AddReplies1795411802762',
      'Retention1798100000000',
      'JobSkips1798300000000',
    ]);
    expect(await skipsTable()).toEqual([{ table_name: 'job_skips' }]);
  });
});
