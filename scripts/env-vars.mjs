#!/usr/bin/env node
// Prints every environment variable each service reads, with its default and meaning, from the same
// specs the services validate at boot (`node scripts/env-vars.mjs`; needs a build). The README's
// configuration table is checked against this by scripts/test/readme.test.mjs.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ROOT } from './lib.mjs';

const SERVICES = {
  gateway: 'GATEWAY_ENV',
  sessions: 'SESSIONS_ENV',
  jobs: 'JOBS_ENV',
  templates: 'TEMPLATES_ENV',
  dashboard: 'DASHBOARD_ENV',
};

export async function envVars() {
  const kit = await import('@bns/service-kit');
  const rows = [];
  const add = (name, v, who) => rows.push({ name, who, defaultValue: v.defaultValue, doc: v.doc });
  for (const [name, v] of Object.entries(kit.COMMON_ENV)) add(name, v, 'all services');
  for (const [name, v] of Object.entries(kit.DATABASE_ENV)) add(name, v, 'sessions, jobs, templates, dashboard');
  for (const [service, exportName] of Object.entries(SERVICES)) {
    const file = join(ROOT, 'services', service, 'dist', 'config', 'env.js');
    if (!existsSync(file)) continue;
    const spec = (await import(pathToFileURL(file).href))[exportName] ?? {};
    for (const [name, v] of Object.entries(spec)) add(name, v, service);
  }
  return rows;
}

export async function envTable() {
  const show = (v) => (v === undefined ? '—' : Array.isArray(v) ? (v.length ? `\`${v.join(',')}\`` : '—') : `\`${v}\``);
  const merged = new Map();
  for (const r of await envVars()) {
    const seen = merged.get(r.name);
    if (seen) seen.who += `, ${r.who}`;
    else merged.set(r.name, { ...r });
  }
  let out = '| Variable | Used by | Default | Meaning |\n|---|---|---|---|\n';
  for (const r of merged.values()) out += `| \`${r.name}\` | ${r.who} | ${show(r.defaultValue)} | ${r.doc.replace(/\|/g, '\\|')} |\n`;
  return out;
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  const table = await envTable();
  if (process.argv.includes('--readme')) {
    // Rewrites the table between the markers in README.md.
    const { readFileSync, writeFileSync } = await import('node:fs');
    const file = join(ROOT, 'README.md');
    const text = readFileSync(file, 'utf8');
    const next = text.replace(/(<!-- env:start -->\n)[\s\S]*?(<!-- env:end -->)/, `$1${table}$2`);
    writeFileSync(file, next);
  } else {
    process.stdout.write(table);
  }
}
