// The scripts the images run, run for real: the health probe against a live HTTP server, the sessions
// entrypoint's shard derivation, the workspace pruning that keeps images production-only, and the
// dependency wait of the init containers.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { createServer as createTcpServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { DOCKER_DIR, REPO_ROOT } from '../test-support/support.mjs';

const run = promisify(execFile);
const script = (name) => join(DOCKER_DIR, 'scripts', name);

/** Exit code and output of a command, without throwing on a non-zero exit. */
async function outcome(cmd, args, env = {}) {
  try {
    const { stdout, stderr } = await run(cmd, args, { env: { PATH: process.env.PATH, ...env }, timeout: 20_000 });
    return { code: 0, stdout, stderr };
  } catch (err) {
    return { code: err.code, stdout: err.stdout ?? '', stderr: err.stderr ?? '' };
  }
}

describe('probe.mjs', () => {
  let server;
  let port;
  const readyz = {
    status: 'unavailable',
    checks: [
      { name: 'nats', ok: true, ms: 1 },
      { name: 'sessions.1', ok: false, ms: 3000, error: 'no answer within 3000 ms' },
    ],
  };
  before(async () => {
    server = createServer((req, res) => {
      if (req.url === '/healthz')
        return res.writeHead(200, { 'content-type': 'application/json' }).end('{"status":"ok"}');
      if (req.url === '/readyz')
        return res.writeHead(503, { 'content-type': 'application/json' }).end(JSON.stringify(readyz));
      if (req.url === '/slow') return setTimeout(() => res.end('late'), 3000);
      res.writeHead(404).end();
    });
    await new Promise((r) => server.listen(0, '127.0.0.1', r));
    port = String(server.address().port);
  });
  after(() => new Promise((r) => server.close(r)));

  test('passes on a 2xx answer and fails on any other', async () => {
    assert.equal((await outcome('node', [script('probe.mjs'), '/healthz'], { PORT: port })).code, 0);
    const failed = await outcome('node', [script('probe.mjs'), '/readyz'], { PORT: port });
    assert.equal(failed.code, 1);
    assert.match(failed.stderr, /HTTP 503/);
  });

  test('--only judges the named checks of /readyz, whatever the others say', async () => {
    assert.equal((await outcome('node', [script('probe.mjs'), '/readyz', '--only', 'nats'], { PORT: port })).code, 0);
    const shard = await outcome('node', [script('probe.mjs'), '/readyz', '--only', 'nats,sessions.1'], { PORT: port });
    assert.equal(shard.code, 1);
    assert.match(shard.stderr, /sessions\.1: no answer within 3000 ms/);
    const unknown = await outcome('node', [script('probe.mjs'), '/readyz', '--only', 'postgres'], { PORT: port });
    assert.equal(unknown.code, 1);
    assert.match(unknown.stderr, /no check named "postgres"/);
  });

  test('fails when nothing listens or the answer is too slow', async () => {
    const closed = createTcpServer();
    await new Promise((r) => closed.listen(0, '127.0.0.1', r));
    const freePort = String(closed.address().port);
    await new Promise((r) => closed.close(r));
    assert.equal((await outcome('node', [script('probe.mjs'), '/healthz'], { PORT: freePort })).code, 1);
    const slow = await outcome('node', [script('probe.mjs'), '/slow'], { PORT: port, PROBE_TIMEOUT_MS: '300' });
    assert.equal(slow.code, 1);
    assert.match(slow.stderr, /no answer within 300 ms/);
  });
});

describe('sessions-entrypoint.sh', () => {
  const entry = script('sessions-entrypoint.sh');
  const shardOf = (env) => outcome('sh', [entry, 'sh', '-c', 'echo "$SHARD_INDEX"'], env);

  test('shard k is the ordinal at the end of the pod name', async () => {
    assert.equal((await shardOf({ POD_NAME: 'prod-bns-sessions-0' })).stdout.trim(), '0');
    assert.equal((await shardOf({ POD_NAME: 'prod-bns-sessions-12' })).stdout.trim(), '12');
  });

  test('an explicit SHARD_INDEX (pod-index label, compose) wins', async () => {
    assert.equal((await shardOf({ POD_NAME: 'prod-bns-sessions-3', SHARD_INDEX: '3' })).stdout.trim(), '3');
    assert.equal((await shardOf({ POD_NAME: 'whatever', SHARD_INDEX: '1' })).stdout.trim(), '1');
  });

  test('a pod name without an ordinal stops the container with a message', async () => {
    const bad = await shardOf({ POD_NAME: 'sessions-abc' });
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /cannot derive SHARD_INDEX from pod name "sessions-abc"/);
  });
});

describe('prune-workspaces.mjs', () => {
  let dir;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'bns-prune-'));
    copyFileSync(join(REPO_ROOT, 'package.json'), join(dir, 'package.json'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));
  const pkg = () => JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
  const prune = (args) => run('node', [script('prune-workspaces.mjs'), ...args], { cwd: dir }).catch((e) => e);

  test('production: only the named workspaces and no root devDependencies', async () => {
    copyFileSync(join(REPO_ROOT, 'package.json'), join(dir, 'package.json'));
    await prune(['libs/contracts', 'libs/service-kit', 'services/jobs']);
    assert.deepEqual(pkg().workspaces, ['libs/contracts', 'libs/service-kit', 'services/jobs']);
    assert.deepEqual(pkg().devDependencies, {});
    assert.deepEqual(pkg().scripts, {});
  });

  test('--build keeps only what tsc needs from the root devDependencies', async () => {
    copyFileSync(join(REPO_ROOT, 'package.json'), join(dir, 'package.json'));
    await prune(['--build', 'libs/contracts', 'web']);
    const dev = Object.keys(pkg().devDependencies);
    assert.ok(dev.includes('typescript'));
    assert.ok(
      dev.every((d) => d === 'typescript' || d.startsWith('@types/')),
      dev.join(','),
    );
    assert.ok(!dev.includes('jest') && !dev.includes('kubernetes-models'));
  });

  test('refuses a folder that is not a workspace', async () => {
    copyFileSync(join(REPO_ROOT, 'package.json'), join(dir, 'package.json'));
    const err = await prune(['services/nope-not-here/../../etc']);
    assert.equal(err.code, 2);
    assert.match(err.stderr, /not workspaces of this repository/);
  });
});

describe('wait-for.mjs', () => {
  test('returns once NATS accepts connections', async () => {
    const nats = createTcpServer((s) => s.end());
    await new Promise((r) => nats.listen(0, '127.0.0.1', r));
    try {
      const ok = await outcome('node', [script('wait-for.mjs')], {
        NATS_URL: `nats://127.0.0.1:${nats.address().port}`,
      });
      assert.equal(ok.code, 0, ok.stderr);
      assert.match(ok.stdout, /NATS 127\.0\.0\.1:\d+ is up/);
    } finally {
      await new Promise((r) => nats.close(r));
    }
  });

  test('gives up with a message after WAIT_TIMEOUT_S', async () => {
    const closed = createTcpServer();
    await new Promise((r) => closed.listen(0, '127.0.0.1', r));
    const port = closed.address().port;
    await new Promise((r) => closed.close(r));
    const started = Date.now();
    const res = await outcome('node', [script('wait-for.mjs')], {
      NATS_URL: `nats://127.0.0.1:${port}`,
      WAIT_TIMEOUT_S: '1',
    });
    assert.equal(res.code, 1);
    assert.match(res.stderr, /gave up on NATS 127\.0\.0\.1:\d+ after 1 s/);
    assert.ok(Date.now() - started < 10_000);
  });
});
