#!/usr/bin/env node
// Initial JavaScript of the built web app, gzipped: what the landing page downloads before it runs,
// and what the signed-in tool adds (its lazy chunk and that chunk's static imports). Files loaded only
// on demand (the xlsx reader/writer, Clerk) are listed apart. Run after `vite build`.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';

const dist = fileURLToPath(new URL('../dist', import.meta.url));
const manifest = JSON.parse(readFileSync(join(dist, '.vite', 'manifest.json'), 'utf8'));
const gz = (file) => gzipSync(readFileSync(join(dist, file)), { level: 9 }).length;

/** A chunk and everything it imports statically. */
function closure(key, seen = new Set()) {
  if (seen.has(key)) return seen;
  seen.add(key);
  for (const dep of manifest[key].imports ?? []) closure(dep, seen);
  return seen;
}
const sum = (keys) => [...keys].reduce((n, k) => n + (manifest[k].file.endsWith('.js') ? gz(manifest[k].file) : 0), 0);
const entry = Object.keys(manifest).find((k) => manifest[k].isEntry);
const landing = closure(entry);
const toolKey = Object.keys(manifest).find((k) => k.includes('SignedInApp'));
const tool = closure(toolKey);
const toolOnly = new Set([...tool].filter((k) => !landing.has(k)));
const css = (manifest[entry].css ?? []).reduce((n, f) => n + gz(f), 0);
const kb = (n) => `${(n / 1024).toFixed(1)} KiB`;

console.log(`landing page initial JS (gzip): ${kb(sum(landing))}  (+ CSS ${kb(css)})`);
console.log(`signed-in tool chunk (gzip):    ${kb(sum(toolOnly))}`);
console.log(`signed-in app initial JS total: ${kb(sum(landing) + sum(toolOnly))}`);
const lazy = Object.keys(manifest).filter((k) => manifest[k].isDynamicEntry && k !== toolKey);
for (const k of lazy)
  console.log(
    `  on demand: ${k.replace(/^.*node_modules\//, '')} ${kb(sum(new Set([...closure(k)].filter((x) => !landing.has(x) && !tool.has(x)))))}`,
  );
