// `npm start` as a user runs it: comes up on Node 24, serves the first slice with a dev token, brings
// back a service killed with SIGKILL (as Kubernetes would), and on Ctrl-C (SIGINT to its process
// group, as a terminal sends it) stops every process it started.
import assert from 'node:assert/strict';
import { spawn, execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readlinkSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { devSignIn, api, freePort, waitFor } from '@bns/testing';
import { ROOT } from '../lib.mjs';

const alive = (pid) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};
const processesMentioning = (text) =>
  execFileSync('ps', ['-eo', 'pid=,args='], { encoding: 'utf8' })
    .split('\n')
    .filter((l) => l.includes(text))
    .map((l) => Number(l.trim().split(/\s+/)[0]));

test('npm start comes up on Node 24, answers with a dev token, restarts a killed service, and Ctrl-C leaves nothing running', { timeout: 240_000 }, async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'bns-launcher-'));
  const port = await freePort();
  const launcher = spawn('npm', ['start', '--', '--no-build'], {
    cwd: ROOT,
    detached: true,
    env: { ...process.env, GATEWAY_PORT: String(port), BNS_DATA_DIR: dataDir, LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  launcher.stdout.on('data', (d) => (output += d));
  launcher.stderr.on('data', (d) => (output += d));
  const exited = new Promise((resolve) => launcher.on('exit', resolve));
  try {
    const started = Date.now();
    await waitFor(() => /Ready: http:\/\/localhost:\d+/.test(output), 120_000, 100, `Ready: in the launcher output\n${output}`);
    const readyMs = Date.now() - started;
    process.stdout.write(`# launcher ready in ${(readyMs / 1000).toFixed(1)} s (no build)\n`);

    const url = `http://localhost:${port}`;
    const session = await devSignIn(url, 'launcher@test.hk', 'Lena');
    const stats = await api(url, session.token).get(`/api/templates/${session.userId}/stats`);
    assert.equal(stats.status, 200);
    assert.deepEqual(stats.body, { success: true, stats: { total_templates: 0, favorite_templates: 0, categories: 0, total_usage: 0 } });
    assert.ok(existsSync(join(dataDir, 'dev-issuer-key.json')), 'the dev issuer keeps its key in the data folder (tokens survive a restart)');

    const pids = [...output.matchAll(/pid (\d+)/g)].map((m) => Number(m[1]));
    assert.ok(pids.length >= 6, `expected every service's pid in the output:\n${output}`);
    for (const pid of pids) {
      const version = execFileSync(readlinkSync(`/proc/${pid}/exe`), ['--version'], { encoding: 'utf8' }).trim();
      assert.ok(Number(version.slice(1).split('.')[0]) >= 24, `service pid ${pid} runs on Node ${version}`);
    }

    // A crash (SIGKILL, nothing cleaned up) is followed by a restart with backoff, reported in one line.
    const jobsPid = Number(/jobs\s+pid (\d+)/.exec(output)[1]);
    const killedAt = Date.now();
    process.kill(jobsPid, 'SIGKILL');
    const restarted = await waitFor(() => /jobs\s+pid (\d+)\s+restarted/.exec(output), 60_000, 100, `jobs to be restarted\n${output}`);
    process.stdout.write(`# jobs back ${((Date.now() - killedAt) / 1000).toFixed(1)} s after SIGKILL\n`);
    assert.match(output, /jobs exited unexpectedly \(killed by SIGKILL\); restarting it in 1 s/);
    const newJobsPid = Number(restarted[1]);
    assert.notEqual(newJobsPid, jobsPid);
    assert.ok(alive(newJobsPid));
    await waitFor(async () => (await fetch(`${url}/readyz`)).status === 200, 30_000, 200, 'the gateway to see every service again');
    // Answered by the new jobs process (an unknown job is 404; 503 would mean nobody answered).
    const unknown = await api(url, session.token).get('/job-status/00000000-0000-4000-8000-000000000000');
    assert.equal(unknown.status, 404);
    pids.splice(pids.indexOf(jobsPid), 1, newJobsPid);
    const infra = processesMentioning(dataDir);
    assert.ok(infra.length >= 2, 'postgres and nats-server run from the data folder');
    for (const pid of [...pids, ...infra]) assert.ok(alive(pid), `pid ${pid} should be running before Ctrl-C`);

    process.kill(-launcher.pid, 'SIGINT');
    let timer;
    await Promise.race([exited, new Promise((_, reject) => (timer = setTimeout(() => reject(new Error(`launcher did not exit:\n${output}`)), 60_000)))]);
    clearTimeout(timer);
    await waitFor(() => [...pids, ...infra].every((pid) => !alive(pid)), 10_000, 100, 'every child to exit');
    assert.deepEqual(processesMentioning(dataDir), [], 'nothing started from the data folder survives');
  } finally {
    try {
      process.kill(-launcher.pid, 'SIGKILL');
    } catch {
      // already gone, as it should be
    }
    rmSync(dataDir, { recursive: true, force: true });
  }
});
