// The README must document every variable a service reads (so it cannot drift from the code).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { envVars } from '../env-vars.mjs';
import { ROOT } from '../lib.mjs';

test('README documents every environment variable with the default the code uses', async () => {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const rows = await envVars();
  assert.ok(rows.length > 20, 'the specs were found');
  for (const r of rows) {
    const line = readme.split('\n').find((l) => l.startsWith(`| \`${r.name}\` |`));
    assert.ok(line, `README.md lacks a configuration row for ${r.name}`);
    if (r.defaultValue !== undefined && !(Array.isArray(r.defaultValue) && r.defaultValue.length === 0)) {
      const shown = Array.isArray(r.defaultValue) ? r.defaultValue.join(',') : String(r.defaultValue);
      assert.ok(line.includes(`\`${shown}\``), `README.md shows another default for ${r.name} (code: ${shown})`);
    }
  }
  assert.match(readme, /npm start/);
  assert.match(readme, /npm test/);
});
