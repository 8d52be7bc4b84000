// The docs must document every variable a service reads (so they cannot drift from the code), and the
// README must stay a short guide.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { configurationDoc, CONFIGURATION_DOC, envVars, README, readmeWithTable, scriptVars } from '../env-vars.mjs';

const REGENERATE = 'run `node scripts/env-vars.mjs --write` after a build';
const README_MAX_BYTES = 20_000;
const shownDefault = (v) => (Array.isArray(v) ? v.join(',') : String(v));
const hasDefault = (v) => v !== undefined && !(Array.isArray(v) && v.length === 0);

test('docs/configuration.md lists every environment variable with the default the code uses', async () => {
  const doc = readFileSync(CONFIGURATION_DOC, 'utf8');
  const rows = [...(await envVars()), ...scriptVars()];
  assert.ok(rows.length > 20, 'the specs were found');
  const lines = doc.split('\n');
  for (const r of rows) {
    // A name may have two rows (a service's variable the launcher also sets): one must show this default.
    const rowsOf = lines.filter((l) => l.startsWith(`| \`${r.name}\` |`));
    assert.ok(rowsOf.length > 0, `docs/configuration.md lacks a row for ${r.name}: ${REGENERATE}`);
    if (hasDefault(r.defaultValue)) {
      const shown = `\`${shownDefault(r.defaultValue)}\``;
      assert.ok(
        rowsOf.some((l) => l.includes(shown)),
        `docs/configuration.md shows another default for ${r.name} (code: ${shownDefault(r.defaultValue)}): ${REGENERATE}`,
      );
    }
  }
  assert.equal(doc, await configurationDoc(), `docs/configuration.md is not what the code generates: ${REGENERATE}`);
});

test('README is a short guide: at most 20,000 bytes, the two commands, its configuration table from the code', async () => {
  const readme = readFileSync(README, 'utf8');
  const bytes = Buffer.byteLength(readme);
  assert.ok(
    bytes <= README_MAX_BYTES,
    `README.md is ${bytes} bytes; keep it at most ${README_MAX_BYTES} (deeper pages go under docs/)`,
  );
  assert.match(readme, /npm start/);
  assert.match(readme, /npm test/);
  assert.match(readme, /docs\/configuration\.md/, 'README links the full configuration table');
  assert.equal(
    readme,
    await readmeWithTable(readme),
    `README.md's configuration table is not what the code generates: ${REGENERATE}`,
  );
  const defaults = new Map((await envVars()).map((r) => [r.name, r.defaultValue]));
  for (const line of readme.split('\n').filter((l) => /^\| `[A-Z][A-Z0-9_]*` \|/.test(l))) {
    const name = line.slice(3, line.indexOf('`', 3));
    assert.ok(defaults.has(name), `README.md's table names ${name}, which no service reads`);
    const v = defaults.get(name);
    if (hasDefault(v))
      assert.ok(
        line.includes(`\`${shownDefault(v)}\``),
        `README.md shows another default for ${name} (code: ${shownDefault(v)})`,
      );
  }
});
