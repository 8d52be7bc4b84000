#!/usr/bin/env node
// Every environment variable of the system, from the same specs the services validate at boot (needs a
// build), plus the few the launcher, the test runner and the benchmarks read.
//   node scripts/env-vars.mjs           prints the full table, grouped
//   node scripts/env-vars.mjs --write   rewrites docs/configuration.md and the README's short table
// scripts/test/readme.test.mjs checks that both are what this writes, so they cannot drift from the code.
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import * as lib from './lib.mjs';

const { ROOT } = lib;

/** Each service's spec export, read from its build. A service without `src/config/env.ts` is skipped. */
const SERVICES = {
  gateway: 'GATEWAY_ENV',
  sessions: 'SESSIONS_ENV',
  jobs: 'JOBS_ENV',
  templates: 'TEMPLATES_ENV',
  dashboard: 'DASHBOARD_ENV',
  integrations: 'INTEGRATIONS_ENV',
  contacts: 'CONTACTS_ENV',
};

export const CONFIGURATION_DOC = join(ROOT, 'docs', 'configuration.md');
export const README = join(ROOT, 'README.md');

/** The groups of docs/configuration.md, in order. */
export const GROUPS = {
  production: {
    title: 'Set in production',
    intro:
      'A production deployment sets these (the Helm chart sets most of them from its values); the defaults suit a laptop, not a cluster.',
  },
  tuning: { title: 'Tuning', intro: 'Safe defaults; change one when a measurement says so.' },
  test: {
    title: 'Tests and local development only',
    intro:
      'The simulated WhatsApp engine and the dev sign-in. They have no effect with `WA_ENGINE=webjs` and `AUTH_MODE=clerk`.',
  },
  launcher: {
    title: 'Launcher (`npm start`)',
    intro: 'Read by `scripts/start.mjs` only; it also passes every variable above to the services it starts.',
  },
  runner: { title: 'Test runner', intro: 'Read by `npm test`, the end-to-end run and the fault tests.' },
  bench: {
    title: 'Benchmarks only',
    intro: 'Read by the scripts in `scripts/bench/` (see [benchmarks.md](benchmarks.md)).',
  },
};

/**
 * The one place that says where a service's variable is documented: its group (every variable not named
 * here is `tuning`) and, for the variables ops should ever set, the short line of the README's table.
 * Every `production` variable needs a `readme` line.
 */
const PLACES = {
  // Set in production
  DATABASE_URL: { group: 'production', readme: 'Postgres; each service creates and migrates its own schema' },
  NATS_URL: { group: 'production', readme: 'NATS with JetStream' },
  AUTH_MODE: { group: 'production', readme: '`clerk` in production; `dev` is the local sign-in' },
  CLERK_ISSUER: { group: 'production', readme: 'Clerk Frontend API URL' },
  CLERK_JWKS_URL: { group: 'production', readme: '`<Frontend API>/.well-known/jwks.json` (or `CLERK_JWT_KEY`)' },
  CLERK_JWT_KEY: { group: 'production', readme: 'Clerk PEM public key, for networkless verification' },
  CLERK_AUTHORIZED_PARTIES: { group: 'production', readme: 'the origins users open the app at' },
  TRUST_PROXY: { group: 'production', readme: 'proxies in front (`1`, or their subnets) behind a load balancer' },
  CORS_ORIGINS: { group: 'production', readme: 'other origins allowed to call the API (same-origin needs none)' },
  WA_ENGINE: { group: 'production', readme: '`webjs` for real WhatsApp (gateway and sessions)' },
  CHROMIUM_PATH: { group: 'production', readme: 'the Chromium the webjs engine launches' },
  SESSIONS_SHARDS: { group: 'production', readme: 'sessions replicas; the same value on every service' },
  SHARD_INDEX: { group: 'production', readme: 'this sessions replica (the StatefulSet ordinal)' },
  DONATION_URL: { group: 'production', readme: 'page the donation links open' },
  SUPPORT_EMAIL: { group: 'production', readme: 'contact address shown in the app' },
  INTEGRATIONS_SECRET_KEY: {
    group: 'production',
    readme: 'seals webhook signing secrets (32 random bytes, base64); never change it in place',
  },
  SESSION_STATE_KEY: {
    group: 'production',
    readme: 'seals the stored WhatsApp logins (32 random bytes, base64); rotate with `SESSION_STATE_KEY_PREVIOUS`',
  },
  SESSION_STATE_KEY_PREVIOUS: {
    group: 'production',
    readme: 'old key(s) during a rotation: logins are sealed again under the new one at start',
  },
  // Tuning knobs worth a line in the README
  LOG_LEVEL: { readme: 'pino log level' },
  METRICS_PORT: { readme: 'Prometheus `/metrics`, off the HTTP port' },
  BIND_ADDRESS: { readme: 'listen address; unset = every address' },
  OTEL_EXPORTER_OTLP_ENDPOINT: { readme: 'OTLP/HTTP collector; tracing is off when unset' },
  DATABASE_POOL_SIZE: { readme: 'Postgres connections per replica' },
  SEND_DELAY_MS: { readme: 'pause between two messages of one account' },
  MAX_RECIPIENTS_PER_JOB: { readme: 'largest job accepted' },
  JOBS_MAX_ACTIVE_PER_USER: { readme: 'unfinished jobs per user (429 above)' },
  RATE_LIMIT_PER_SECOND: { readme: 'sustained requests per user' },
  RATE_LIMIT_BURST: { readme: 'burst of requests per user before 429' },
  BODY_LIMIT: { readme: 'largest JSON body (`START_BODY_LIMIT` for starts)' },
  RESTORE_CONCURRENCY: { readme: 'links restored side by side at start' },
  // Tests and local development only
  DEV_TOKEN_TTL_S: { group: 'test' },
  DEV_ISSUER_KEY_FILE: { group: 'test' },
  POLICY_MIN_DELAY_MS: { group: 'test' },
  SIM_QR_INTERVAL_MS: { group: 'test' },
  SIM_READY_DELAY_MS: { group: 'test' },
  SIM_AUTO_SCAN_MS: { group: 'test' },
  SIM_FAIL_NUMBERS: { group: 'test' },
  SIM_DELIVERED_DELAY_MS: { group: 'test' },
  SIM_RATE_LIMIT_AFTER: { group: 'test' },
  SIM_READ_DELAY_MS: { group: 'test' },
  WEBHOOK_RETRY_SCALE: { group: 'test' },
};

/**
 * Variables no service reads: each script's own, with its default as the script has it. The launcher's
 * own checked variables (`LAUNCHER_ENV` in lib.mjs, where it has them) come from there and win over a
 * row of the same name here.
 */
const SCRIPT_VARS = [
  [
    'launcher',
    'GATEWAY_PORT',
    'npm start',
    8080,
    'port of the gateway (web app and API); a taken port stops the start with its name',
  ],
  [
    'launcher',
    'BNS_DATA_DIR',
    'npm start',
    '.data',
    'folder of the private Postgres and NATS data, the logs and the dev issuer key',
  ],
  ['launcher', 'DATABASE_URL', 'npm start', undefined, 'use this Postgres instead of starting a private one'],
  ['launcher', 'NATS_URL', 'npm start', undefined, 'use this NATS instead of starting a private nats-server'],
  ['launcher', 'SESSIONS_SHARDS', 'npm start', 2, 'sessions shards to start'],
  [
    'launcher',
    'AUTH_MODE',
    'npm start',
    undefined,
    '`clerk` when CLERK_ISSUER and CLERK_JWKS_URL (or CLERK_JWT_KEY) are set, else `dev`',
  ],
  ['launcher', 'WA_ENGINE', 'npm start', 'simulated', 'WhatsApp engine of the sessions replicas and the gateway'],
  [
    'launcher',
    'DEV_ISSUER_KEY_FILE',
    'npm start',
    '$BNS_DATA_DIR/dev-issuer-key.json',
    'the dev issuer key, kept so a restart keeps users signed in',
  ],
  [
    'runner',
    'TEST_LANES',
    'npm test',
    3,
    'lanes of project tests run side by side (1, 2 or 3); 1 runs the projects one after another',
  ],
  ['runner', 'E2E_URL', 'e2e', undefined, 'drive a system already running at this URL instead of starting one'],
  ['runner', 'E2E_NO_BUILD', 'e2e', undefined, 'skip the build before the end-to-end run'],
  [
    'runner',
    'E2E_STARTUP_TIMEOUT_MS',
    'e2e',
    900000,
    'longest wait for the system to start (install and build included)',
  ],
  ['runner', 'CHROMIUM_PATH', 'e2e, CSP test', '/usr/bin/chromium', 'the Chromium playwright-core drives'],
  [
    'runner',
    'NATS_SERVER_BIN',
    'libs/testing',
    undefined,
    'the nats-server to run (else /usr/sbin, /usr/bin, /usr/local/bin)',
  ],
  [
    'runner',
    'NODE_COMPILE_CACHE',
    'libs/testing',
    '$TMPDIR/bns-node-compile-cache',
    "V8's compiled code of spawned services, reused across starts",
  ],
  ['runner', 'CHAOS_RECIPIENTS', 'fault tests', 30, 'recipients of each tenant’s job in every fault scenario'],
  ['runner', 'FUZZ_SEED', 'gateway fuzz test', 152026, 'seed of the malformed requests'],
  ['runner', 'TEST_RESULTS_NAME', 'test reporters', 'node-test', 'name of the results file under test-output/results'],
  [
    'runner',
    'TEST_RESULTS_SUFFIX',
    'test reporters',
    undefined,
    "added to a Jest project's results file name (npm test's second run of the timed test files)",
  ],
  ['runner', 'JEST_SKIP_TIMED', 'jest', undefined, '1 leaves the timed test files (jest.preset.js) out of a run'],
  [
    'bench',
    'BENCH_PROFILE',
    'jobs-throughput, pacing, pgboss-compare, campaign-throughput, job-starts, accept-50k',
    undefined,
    'CPU-profile `jobs`, `gateway`, `sessions-0` or `sessions-1` over each measured stretch (`JOBS_PROFILE=1` = `jobs`)',
  ],
  [
    'bench',
    'BENCH_PG_FLAGS',
    'jobs-throughput, pacing, pgboss-compare',
    undefined,
    'extra Postgres server flags, e.g. `-c pg_stat_statements.track_planning=on`',
  ],
  [
    'bench',
    'BENCH_PG_LOG',
    'jobs-throughput, pacing, pgboss-compare',
    undefined,
    "file the benchmark Postgres writes its log to (e.g. auto_explain's plans)",
  ],
  [
    'bench',
    'JOBS_STEP_*',
    'jobs-throughput, pacing, pgboss-compare',
    undefined,
    'passed on to the jobs service (`JOBS_STEP_BATCH`, `JOBS_STEP_TRANSACTIONS`; `JOBS_START_CONCURRENCY` too), to compare settings',
  ],
  [
    'bench',
    'BENCH_METER',
    'job-starts',
    undefined,
    '`1`: print the meter (CPU per process, statements, row writes) over the starts, per start',
  ],
  [
    'bench',
    'BENCH_ROUNDS',
    'pgboss-compare',
    0,
    'extra rounds of "send only" against pg-boss → sessions, order alternating',
  ],
  [
    'bench',
    'BENCH_SCHEDULE_LEAD_MS',
    'pgboss-compare',
    15000,
    'how far ahead the "send only" jobs are scheduled, so they are all created in time',
  ],
  ['bench', 'PGBOSS_WORKERS', 'pgboss-compare', 1, 'pg-boss workers side by side (its localConcurrency)'],
  ['bench', 'PGBOSS_BATCH', 'pgboss-compare', 20, 'jobs one pg-boss fetch takes'],
  ['bench', 'PGBOSS_SERIAL', 'pgboss-compare', undefined, "`1`: a batch's round trips one after another"],
  [
    'bench',
    'PGBOSS_TARGETS',
    'pgboss-compare',
    'sessions,echo',
    'what pg-boss jobs call: the sessions service, an echo responder, or both',
  ],
  [
    'bench',
    'GATEWAY_PROFILE',
    'gateway-pollers, dashboard-read, realtime-progress',
    undefined,
    'CPU-profile the gateway (`1`; gateway-pollers also `revalidating`, `1hz`, `full`)',
  ],
  [
    'bench',
    'BENCH_PROFILE_SERVICE',
    'gateway-pollers',
    'gateway',
    '`jobs`: GATEWAY_PROFILE profiles the jobs service instead',
  ],
  ['bench', 'BENCH_SHED_MAX_IN_FLIGHT', 'gateway-pollers', undefined, "the gateway's SHED_MAX_IN_FLIGHT for the run"],
  [
    'bench',
    'BENCH_SHED_READS_MAX_IN_FLIGHT',
    'gateway-pollers',
    undefined,
    "the gateway's SHED_READS_MAX_IN_FLIGHT for the run",
  ],
  [
    'bench',
    'BENCH_SHED_TARGET_MS',
    'gateway-pollers',
    undefined,
    "the gateway's SHED_TARGET_MS for the run (`0`: a fixed bound)",
  ],
  ['bench', 'BENCH_JOB_RECIPIENTS', 'gateway-pollers', 500, 'recipients of each polled running job'],
  [
    'bench',
    'BENCH_OVERLOAD_RUNS',
    'gateway-pollers',
    1,
    'times the overload pair (connect at once, open connections) runs',
  ],
  ['bench', 'BENCH_ONLY', 'gateway-pollers', undefined, '`overload`: stop after the overload phase'],
  [
    'bench',
    'DASHBOARD_PROFILE',
    'dashboard-read',
    undefined,
    '`1`: CPU-profile the dashboard service over the first read run',
  ],
  ['bench', 'JOBS_PROFILE', 'realtime-progress', undefined, '`1`: CPU-profile the jobs service'],
  ['bench', 'PG_STATS', 'realtime-progress', undefined, "`1`: print Postgres's statement counts"],
  [
    'bench',
    'TRANSPORTS',
    'realtime-progress',
    undefined,
    "socket.io transports of the clients, comma-separated (default: the web app's)",
  ],
  ['bench', 'BENCH_ONLY_ACCEPT', 'job-results', undefined, 'stop after the 50,000-row start'],
  ['bench', 'JOBS_LOG_LEVEL', 'job-results', 'warn', "the jobs service's LOG_LEVEL"],
];

function show(v) {
  if (v === undefined) return '—';
  if (Array.isArray(v)) return v.length ? `\`${v.join(',')}\`` : '—';
  return `\`${v}\``;
}
const cell = (text) => String(text).replace(/\|/g, '\\|');

/** Every variable a service reads: name, who reads it, default, help text and group. */
export async function envVars() {
  const kit = await import('@bns/service-kit');
  const rows = [];
  const add = (name, v, who) =>
    rows.push({ name, who, defaultValue: v.defaultValue, doc: v.doc, group: PLACES[name]?.group ?? 'tuning' });
  for (const [name, v] of Object.entries(kit.COMMON_ENV)) add(name, v, 'all services');
  for (const [name, v] of Object.entries(kit.DATABASE_ENV)) add(name, v, 'every service with a schema');
  for (const [service, exportName] of Object.entries(SERVICES)) {
    const source = join(ROOT, 'services', service, 'src', 'config', 'env.ts');
    const built = join(ROOT, 'services', service, 'dist', 'config', 'env.js');
    if (!existsSync(source)) continue;
    if (!existsSync(built))
      throw new Error(`services/${service} is not built: run \`npx nx run @bns/${service}:build\` first`);
    if (statSync(source).mtimeMs > statSync(built).mtimeMs)
      process.stderr.write(`warning: services/${service}/src/config/env.ts is newer than its build\n`);
    const spec = (await import(pathToFileURL(built).href))[exportName];
    if (!spec) throw new Error(`services/${service}/dist/config/env.js exports no ${exportName}`);
    for (const [name, v] of Object.entries(spec)) add(name, v, service);
  }
  return rows;
}

/** The variables the launcher, the test runner and the benchmarks read (no service reads them). */
export function scriptVars() {
  const launcher = Object.entries(lib.LAUNCHER_ENV ?? {}).map(([name, v]) => ({
    group: 'launcher',
    name,
    who: 'npm start',
    defaultValue: v.defaultValue,
    doc: v.doc,
  }));
  const checked = new Set(launcher.map((r) => r.name));
  const listed = SCRIPT_VARS.map(([group, name, who, defaultValue, doc]) => ({ group, name, who, defaultValue, doc }));
  return [...launcher, ...listed.filter((r) => !(r.group === 'launcher' && checked.has(r.name)))];
}

/** One row per variable: a variable read by several services is one row naming them all. */
function merged(rows) {
  const byName = new Map();
  for (const r of rows) {
    const seen = byName.get(r.name);
    if (seen) seen.who += `, ${r.who}`;
    else byName.set(r.name, { ...r });
  }
  return [...byName.values()];
}

function table(rows) {
  let out = '| Variable | Used by | Default | Meaning |\n|---|---|---|---|\n';
  for (const r of rows) out += `| \`${r.name}\` | ${r.who} | ${show(r.defaultValue)} | ${cell(r.doc)} |\n`;
  return out;
}

/** The whole of docs/configuration.md. */
export async function configurationDoc() {
  const services = merged(await envVars());
  const all = [...services, ...scriptVars()];
  let out = `# Configuration

<!-- Generated by \`node scripts/env-vars.mjs --write\` from the specs each service validates at boot. Do not edit by hand. -->

Every service reads its environment once at start and checks it: a bad or missing value stops the
service with a message that names the variable. Each service also reads \`PORT\`, its HTTP port (the API
on the gateway, \`/healthz\` and \`/readyz\` everywhere; defaults: gateway \`8080\`, sessions \`3001\`, jobs
\`3002\`, templates \`3003\`, dashboard \`3004\`). ${services.length} variables are read by the services,
${scriptVars().length} more by the launcher, the test runner and the benchmarks.

`;
  for (const [key, group] of Object.entries(GROUPS)) {
    const rows = all.filter((r) => r.group === key);
    if (rows.length === 0) continue;
    out += `## ${group.title}\n\n${group.intro}\n\n${table(rows)}\n`;
  }
  return out;
}

/** The README's short table: what ops should ever set, each variable on one short line. */
export async function readmeTable() {
  const rows = merged(await envVars());
  const missing = rows.filter((r) => r.group === 'production' && !PLACES[r.name]?.readme).map((r) => r.name);
  if (missing.length)
    throw new Error(`scripts/env-vars.mjs: give these production variables a README line: ${missing.join(', ')}`);
  const shown = rows.filter((r) => PLACES[r.name]?.readme);
  shown.sort((a, b) => (a.group === 'production' ? 0 : 1) - (b.group === 'production' ? 0 : 1));
  let out = '| Variable | Default | What it is |\n|---|---|---|\n';
  for (const r of shown)
    out += `| \`${r.name}\` | ${show(r.defaultValue)} | ${cell(PLACES[r.name].readme)}${r.group === 'production' ? ' ¹' : ''} |\n`;
  return out;
}

const README_MARKERS = /(<!-- env:start -->\n)[\s\S]*?(<!-- env:end -->)/;

/** README.md with its table between the markers replaced. */
export async function readmeWithTable(text) {
  if (!README_MARKERS.test(text)) throw new Error('README.md has no <!-- env:start --> / <!-- env:end --> markers');
  const tableText = await readmeTable();
  return text.replace(README_MARKERS, (_, start, end) => `${start}${tableText}${end}`);
}

/** Ungrouped, for a terminal: every variable with its group. */
async function printAll() {
  const rows = [...merged(await envVars()), ...scriptVars()];
  let out = '| Variable | Group | Used by | Default | Meaning |\n|---|---|---|---|---|\n';
  for (const r of rows) out += `| \`${r.name}\` | ${r.group} | ${r.who} | ${show(r.defaultValue)} | ${cell(r.doc)} |\n`;
  process.stdout.write(out);
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  if (process.argv.includes('--write')) {
    writeFileSync(CONFIGURATION_DOC, await configurationDoc());
    writeFileSync(README, await readmeWithTable(readFileSync(README, 'utf8')));
    process.stdout.write('Wrote docs/configuration.md and the README table.\n');
  } else {
    await printAll();
  }
}
