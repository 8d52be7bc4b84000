// Shared helpers of the deploy checks.
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';

// Kept outside test/: only test/*.test.mjs are test files, and this is a helper.
export const DEPLOY_DIR = dirname(dirname(fileURLToPath(import.meta.url)));
export const REPO_ROOT = dirname(DEPLOY_DIR);
export const CHART_DIR = join(DEPLOY_DIR, 'helm');
export const DOCKER_DIR = join(REPO_ROOT, 'docker');
export const FIXTURES_DIR = join(DEPLOY_DIR, 'test', 'fixtures');

/** Services with a Postgres schema; the gateway has none. */
/** The services that own a schema: each gets a database role and URL. */
export const DB_SERVICES = ['sessions', 'jobs', 'templates', 'dashboard', 'integrations', 'contacts'];
/** The services of the shared templates (services.yaml, sessions.yaml, monitoring.yaml); integrations has a file of its own. */
export const SERVICES = ['gateway', 'sessions', 'jobs', 'templates', 'dashboard', 'contacts'];
/** Paths the Ingress must send to the gateway (the gateway's API_PATHS minus the health endpoints). */
export const API_PATHS = [
  '/api',
  '/v1',
  '/auth',
  '/socket.io',
  '/start-bulk-messages',
  '/job-status',
  '/job-logs',
  '/cancel-job',
  '/job-results',
  '/dev',
];

/** The full path of a command when it is on the PATH, else undefined. */
export function commandOnPath(name) {
  try {
    return execFileSync('sh', ['-c', `command -v ${name}`], { encoding: 'utf8' }).trim() || undefined;
  } catch {
    return undefined;
  }
}

export function read(path) {
  return readFileSync(path, 'utf8');
}

/** Every file under `dir` (recursively) whose name passes `keep`. */
export function filesUnder(dir, keep = () => true) {
  const out = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...filesUnder(path, keep));
    else if (keep(entry.name, path)) out.push(path);
  }
  return out.sort();
}

/** Parses every YAML document of a text; throws with the file name on the first error. */
export function parseYamlDocuments(text, name = 'yaml') {
  const docs = parseAllDocuments(text, { merge: true });
  for (const doc of docs) {
    if (doc.errors.length > 0) throw new Error(`${name}: ${doc.errors[0].message}`);
  }
  return docs.map((d) => d.toJS({ maxAliasCount: 1000 })).filter((d) => d !== null && d !== undefined);
}

/**
 * The variables a service reads at start, from its env specs: service-kit's COMMON_ENV (+ DATABASE_ENV
 * when it has a schema) + PORT, and services/<svc>/src/config/env.ts. Parsed from the source so a
 * variable added there shows up here without anyone remembering the chart.
 */
export function envVariablesOf(service) {
  const names = (text) => [...text.matchAll(/^\s+([A-Z][A-Z0-9_]+):\s*env\./gm)].map((m) => m[1]);
  const kit = read(join(REPO_ROOT, 'libs/service-kit/src/config/env.ts'));
  const common = names(kit.slice(kit.indexOf('export const COMMON_ENV'), kit.indexOf('export const DATABASE_ENV')));
  const database = names(kit.slice(kit.indexOf('export const DATABASE_ENV')));
  const own = names(read(join(REPO_ROOT, 'services', service, 'src/config/env.ts')));
  return [...new Set([...common, ...(service === 'gateway' ? [] : database), 'PORT', ...own])];
}
