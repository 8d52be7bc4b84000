// The chart's role script against a real Postgres: every service role can do what its service does at
// start (CREATE SCHEMA IF NOT EXISTS + migrations in its own schema) and nothing on another service's
// schema or on `public`. Skipped, with the reason, where psql is not installed.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import pg from 'pg';
import { startPostgres } from '@bns/testing';
import { commandOnPath } from '../test-support/support.mjs';

const run = promisify(execFile);
const SCRIPT = fileURLToPath(new URL('../helm/files/db-roles.sh', import.meta.url));
const SERVICES = ['sessions', 'jobs', 'templates', 'dashboard'];
const missing = ['psql', 'pg_isready'].filter((c) => !commandOnPath(c));

let postgres;
let admin;
const passwords = Object.fromEntries(SERVICES.map((s) => [s, `pw-${s}-${Math.random().toString(36).slice(2)}`]));

function scriptEnv(extra = {}) {
  const url = new URL(postgres.url);
  return {
    PATH: process.env.PATH,
    PGHOST: url.hostname,
    PGPORT: url.port,
    PGUSER: decodeURIComponent(url.username),
    PGPASSWORD: decodeURIComponent(url.password),
    PGDATABASE: url.pathname.slice(1),
    ...Object.fromEntries(SERVICES.map((s) => [`BNS_DB_PASSWORD_${s.toUpperCase()}`, passwords[s]])),
    ...extra,
  };
}

async function asRole(service, fn, password = passwords[service]) {
  const url = new URL(postgres.url);
  url.username = `bns_${service}`;
  url.password = password;
  const client = new pg.Client({ connectionString: url.toString() });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

before(async () => {
  if (missing.length > 0) return;
  postgres = await startPostgres();
  admin = new pg.Client({ connectionString: postgres.url });
  await admin.connect();
});

after(async () => {
  await admin?.end();
  await postgres?.stop();
});

test('db-roles.sh creates one role per service that owns its schema and can migrate in it', async (t) => {
  if (missing.length > 0) return t.skip(`${missing.join(', ')} not on PATH: role script not exercised`);
  const { stdout } = await run('sh', [SCRIPT], { env: scriptEnv() });
  assert.match(stdout, /db-roles: done/);
  for (const svc of SERVICES) {
    await asRole(svc, async (c) => {
      // Exactly what service-kit does at boot, then a migration-like DDL and a write.
      await c.query(`CREATE SCHEMA IF NOT EXISTS "${svc}"`);
      await c.query(`CREATE TABLE IF NOT EXISTS "${svc}".probe (id int primary key)`);
      await c.query(`INSERT INTO "${svc}".probe VALUES (1) ON CONFLICT DO NOTHING`);
      const { rows } = await c.query('SHOW search_path');
      assert.equal(rows[0].search_path, svc);
    });
  }
  const { rows } = await admin.query(
    `SELECT n.nspname, r.rolname FROM pg_namespace n JOIN pg_roles r ON r.oid = n.nspowner WHERE n.nspname = ANY($1) ORDER BY 1`,
    [SERVICES],
  );
  assert.deepEqual(
    rows,
    SERVICES.map((s) => ({ nspname: s, rolname: `bns_${s}` })).sort((a, b) => a.nspname.localeCompare(b.nspname)),
  );
});

test('a service role cannot read, write or create in another service schema nor in public', async (t) => {
  if (missing.length > 0) return t.skip(`${missing.join(', ')} not on PATH: role script not exercised`);
  await asRole('jobs', async (c) => {
    await assert.rejects(c.query('SELECT * FROM templates.probe'), /permission denied for schema templates/);
    await assert.rejects(c.query('CREATE TABLE sessions.intruder (id int)'), /permission denied for schema sessions/);
    await assert.rejects(c.query('CREATE TABLE public.intruder (id int)'), /permission denied for schema public/);
    await assert.rejects(c.query('ALTER SCHEMA dashboard RENAME TO stolen'), /must be owner of schema dashboard/);
    await assert.rejects(c.query('CREATE ROLE sneaky'), /permission denied to create role/);
  });
});

test('rerunning db-roles.sh is harmless and rotates the passwords', async (t) => {
  if (missing.length > 0) return t.skip(`${missing.join(', ')} not on PATH: role script not exercised`);
  const old = passwords.templates;
  passwords.templates = `${old}-rotated`;
  await run('sh', [SCRIPT], { env: scriptEnv() });
  await asRole('templates', async (c) => {
    const { rows } = await c.query('SELECT count(*)::int AS n FROM probe');
    assert.equal(rows[0].n, 1, 'data of the schema survives a rerun');
  });
  await assert.rejects(
    asRole('templates', async () => undefined, old),
    /password authentication failed/,
  );
});

test('the init container waits until a service role can log in, and names the role when it cannot', async (t) => {
  if (missing.length > 0) return t.skip(`${missing.join(', ')} not on PATH: role script not exercised`);
  const wait = fileURLToPath(new URL('../../docker/scripts/wait-for.mjs', import.meta.url));
  const nats = createServer((s) => s.end());
  await new Promise((r) => nats.listen(0, '127.0.0.1', r));
  try {
    const url = new URL(postgres.url);
    url.username = 'bns_dashboard';
    url.password = passwords.dashboard;
    const env = {
      PATH: process.env.PATH,
      NATS_URL: `nats://127.0.0.1:${nats.address().port}`,
      DATABASE_URL: url.toString(),
      WAIT_TIMEOUT_S: '2',
    };
    const { stdout } = await run('node', [wait], { env });
    assert.match(stdout, /Postgres 127\.0\.0\.1:\d+ as bns_dashboard is up/);
    url.password = 'wrong';
    await assert.rejects(run('node', [wait], { env: { ...env, DATABASE_URL: url.toString() } }), (err) => {
      assert.match(err.stderr, /gave up on Postgres .* as bns_dashboard after 2 s: password authentication failed/);
      return true;
    });
  } finally {
    await new Promise((r) => nats.close(r));
  }
});

test('db-roles.sh refuses to run without a password for every service', async (t) => {
  if (missing.length > 0) return t.skip(`${missing.join(', ')} not on PATH: role script not exercised`);
  await assert.rejects(run('sh', [SCRIPT], { env: scriptEnv({ BNS_DB_PASSWORD_JOBS: '' }) }), (err) => {
    assert.match(err.stderr, /BNS_DB_PASSWORD_JOBS is not set/);
    return true;
  });
});
