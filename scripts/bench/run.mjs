#!/usr/bin/env node
// `npm run bench [-- name…]`: runs the named benchmarks in scripts/bench (all when none is named), one
// after another, after a build. Each prints its own figures; none of them is a pass/fail test.
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fail, ROOT, run, useNode24 } from '../lib.mjs';

await useNode24();

const dir = join(ROOT, 'scripts', 'bench');
const all = readdirSync(dir)
  .filter((f) => f.endsWith('.mjs') && f !== 'run.mjs' && !f.endsWith('-lib.mjs'))
  .map((f) => f.replace(/\.mjs$/, ''))
  .sort();
const wanted = process.argv.slice(2);
const unknown = wanted.filter((w) => !all.includes(w));
if (unknown.length > 0) fail(`Unknown benchmark ${unknown.join(', ')}; there are: ${all.join(', ')}`);
if (run('npx', ['nx', 'run-many', '-t', 'build', '--output-style=static']) !== 0) fail('Build failed.');
for (const name of wanted.length > 0 ? wanted : all) {
  process.stdout.write(`\n=== ${name} ===\n`);
  if (run(process.execPath, [join(dir, `${name}.mjs`)]) !== 0) fail(`${name} failed`);
}
