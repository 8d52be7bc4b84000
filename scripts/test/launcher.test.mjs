// `npm start` as a user runs it: comes up on Node 24, serves the first slice with a dev token, keeps
// every port on 127.0.0.1 and each process's metrics on a port of its own, brings back a service killed
// with SIGKILL (as Kubernetes would) and a nats-server killed and started again by its own command line,
// and on Ctrl-C (SIGINT to its process group, as a terminal sends it) stops every process it started.
// It also comes up on a machine whose cores are both busy, where starts take longer than 30 s.
import assert from 'node:assert/strict';
import { spawn, execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { isAbsolute, join } from 'node:path';
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

/**
 * The TCP ports a process listens on, from /proc: its socket inodes (/proc/<pid>/fd) looked up in
 * /proc/net/tcp and tcp6. Addresses as the kernel writes them: `0100007F` is 127.0.0.1, `00000000` is
 * every IPv4 address, and a 32-digit one is IPv6 (all zeros: every address).
 */
function listeningSockets(pid) {
  const inodes = new Set();
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
      if (m) inodes.add(m[1]);
    } catch {
      // closed meanwhile
    }
  }
  const sockets = [];
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    for (const line of readFileSync(table, 'utf8').split('\n').slice(1)) {
      const f = line.trim().split(/\s+/);
      // f[3] is the state (0A = LISTEN), f[9] the inode.
      if (f.length < 10 || f[3] !== '0A' || !inodes.has(f[9])) continue;
      const [address, port] = f[1].split(':');
      sockets.push({ address: address === '0100007F' ? '127.0.0.1' : address, port: parseInt(port, 16) });
    }
  }
  return sockets;
}

/** `npm start -- --no-build` on a data folder of its own; `output` holds what it printed so far. */
function launch(dataDir, port, extraEnv = {}) {
  const launcher = spawn('npm', ['start', '--', '--no-build'], {
    cwd: ROOT,
    detached: true,
    env: { ...process.env, GATEWAY_PORT: String(port), BNS_DATA_DIR: dataDir, LOG_LEVEL: 'warn', ...extraEnv },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const run = { launcher, output: '', exited: new Promise((resolve) => launcher.on('exit', resolve)) };
  launcher.stdout.on('data', (d) => (run.output += d));
  launcher.stderr.on('data', (d) => (run.output += d));
  return run;
}

/** Ctrl-C as a terminal sends it, and the launcher's exit within a minute. */
async function interrupt(run) {
  process.kill(-run.launcher.pid, 'SIGINT');
  let timer;
  await Promise.race([
    run.exited,
    new Promise(
      (_, reject) => (timer = setTimeout(() => reject(new Error(`launcher did not exit:\n${run.output}`)), 60_000)),
    ),
  ]);
  clearTimeout(timer);
}

test(
  'npm start comes up on Node 24, answers with a dev token, keeps its ports on 127.0.0.1 and its metrics apart, restarts a killed service, and Ctrl-C leaves nothing running',
  { timeout: 300_000 },
  async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'bns-launcher-'));
    const port = await freePort();
    const run = launch(dataDir, port);
    let restartedNats;
    try {
      const started = Date.now();
      await waitFor(
        () => /Ready: http:\/\/localhost:\d+|Could not start/.test(run.output),
        240_000,
        100,
        'Ready: in the launcher output',
      ).catch((err) => {
        throw new Error(`${err.message}\n${run.output}`);
      });
      assert.doesNotMatch(run.output, /Could not start/, run.output);
      const readyMs = Date.now() - started;
      process.stdout.write(`# launcher ready in ${(readyMs / 1000).toFixed(1)} s (no build)\n`);

      const url = `http://localhost:${port}`;
      const session = await devSignIn(url, 'launcher@test.hk', 'Lena');
      const stats = await api(url, session.token).get(`/api/templates/${session.userId}/stats`);
      assert.equal(stats.status, 200);
      assert.deepEqual(stats.body, {
        success: true,
        stats: { total_templates: 0, favorite_templates: 0, categories: 0, total_usage: 0 },
      });
      assert.ok(
        existsSync(join(dataDir, 'dev-issuer-key.json')),
        'the dev issuer keeps its key in the data folder (tokens survive a restart)',
      );

      // One line per process: its pid, its HTTP address and its own metrics address.
      const table = [
        ...run.output.matchAll(
          /^ {2}(\S+)\s+pid (\d+) {2}http:\/\/127\.0\.0\.1:(\d+) {2}metrics http:\/\/127\.0\.0\.1:(\d+)$/gm,
        ),
      ].map((m) => ({
        label: m[1],
        pid: Number(m[2]),
        port: Number(m[3]),
        metricsPort: Number(m[4]),
      }));
      for (const label of ['dashboard', 'gateway', 'jobs', 'sessions-0', 'sessions-1', 'templates'])
        assert.ok(
          table.some((r) => r.label === label),
          `${label}'s line:\n${run.output}`,
        );
      assert.equal(
        table.length,
        [...run.output.matchAll(/ pid \d+ /g)].length,
        `every process's line has its addresses:\n${run.output}`,
      );
      const pids = table.map((r) => r.pid);
      for (const pid of pids) {
        const version = execFileSync(readlinkSync(`/proc/${pid}/exe`), ['--version'], { encoding: 'utf8' }).trim();
        assert.ok(Number(version.slice(1).split('.')[0]) >= 24, `service pid ${pid} runs on Node ${version}`);
      }
      for (const { label, port: httpPort, metricsPort } of table) {
        assert.notEqual(metricsPort, httpPort, label);
        const scraped = await fetch(`http://127.0.0.1:${metricsPort}/metrics`);
        assert.equal(scraped.status, 200, label);
        assert.match(
          await scraped.text(),
          new RegExp(`^process_cpu_user_seconds_total\\{bns_service="${label.replace(/-\d+$/, '')}"\\} `, 'm'),
          label,
        );
        // The HTTP port serves health, never the metrics.
        assert.equal((await fetch(`http://127.0.0.1:${httpPort}/healthz`)).status, 200, label);
        const hidden = await fetch(`http://127.0.0.1:${httpPort}/metrics`);
        assert.equal(hidden.status, 404, `${label}'s HTTP port must not serve /metrics`);
        await hidden.arrayBuffer();
      }
      assert.equal((await fetch(`${url}/metrics`)).status, 404, 'the public port does not serve /metrics');

      // Postgres and nats-server run from the data folder; nats-server by absolute path, on 127.0.0.1.
      const infra = processesMentioning(dataDir);
      assert.ok(infra.length >= 2, 'postgres and nats-server run from the data folder');
      const natsPid = infra.find((pid) => /nats-server/.test(readFileSync(`/proc/${pid}/cmdline`, 'utf8')));
      assert.ok(natsPid, 'nats-server runs with its store in the data folder');
      const natsArgs = readFileSync(`/proc/${natsPid}/cmdline`, 'utf8').split('\0').filter(Boolean);
      assert.ok(isAbsolute(natsArgs[0]), `nats-server runs by absolute path: ${natsArgs.join(' ')}`);
      assert.equal(natsArgs[natsArgs.indexOf('-sd') + 1], join(dataDir, 'nats'));
      assert.equal(natsArgs[natsArgs.indexOf('-a') + 1], '127.0.0.1');

      // Nothing it started listens beyond this machine: every listening socket is on 127.0.0.1.
      for (const pid of [...pids, ...infra]) {
        const sockets = listeningSockets(pid);
        const name = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').slice(0, 3).join(' ');
        assert.ok(sockets.length > 0, `${name} listens on something`);
        for (const s of sockets) assert.equal(s.address, '127.0.0.1', `${name} listens on ${s.address}:${s.port}`);
      }

      // A crash (SIGKILL, nothing cleaned up) is followed by a restart with backoff, reported in one line
      // with its addresses: the same HTTP port, and the same metrics port when it is still free.
      const jobs = table.find((r) => r.label === 'jobs');
      const killedAt = Date.now();
      process.kill(jobs.pid, 'SIGKILL');
      const restarted = await waitFor(
        () =>
          /^ {2}jobs\s+pid (\d+) {2}restarted {2}http:\/\/127\.0\.0\.1:(\d+) {2}metrics http:\/\/127\.0\.0\.1:(\d+)$/m.exec(
            run.output,
          ),
        60_000,
        100,
        'jobs to be restarted',
      );
      process.stdout.write(`# jobs back ${((Date.now() - killedAt) / 1000).toFixed(1)} s after SIGKILL\n`);
      assert.match(run.output, /jobs exited unexpectedly \(killed by SIGKILL\); restarting it in 1 s/);
      const newJobsPid = Number(restarted[1]);
      assert.notEqual(newJobsPid, jobs.pid);
      assert.equal(Number(restarted[2]), jobs.port);
      assert.equal((await fetch(`http://127.0.0.1:${restarted[3]}/metrics`)).status, 200);
      assert.ok(alive(newJobsPid));
      await waitFor(
        async () => (await fetch(`${url}/readyz`)).status === 200,
        30_000,
        200,
        'the gateway to see every service again',
      );
      // Answered by the new jobs process (an unknown job is 404; 503 would mean nobody answered).
      const unknown = await api(url, session.token).get('/job-status/00000000-0000-4000-8000-000000000000');
      assert.equal(unknown.status, 404);
      pids.splice(pids.indexOf(jobs.pid), 1, newJobsPid);

      // nats-server killed and started again with the very command line it ran with (from anywhere):
      // the same port and store, and every service finds it again.
      process.kill(natsPid, 'SIGKILL');
      await waitFor(() => !alive(natsPid), 10_000, 50, 'nats-server to die');
      restartedNats = spawn(natsArgs[0], natsArgs.slice(1), { cwd: tmpdir(), stdio: 'ignore' });
      await waitFor(
        async () => (await fetch(`${url}/readyz`)).status === 200,
        60_000,
        200,
        'every service back on the restarted nats-server',
      );
      assert.equal((await api(url, session.token).get(`/api/templates/${session.userId}/stats`)).status, 200);
      for (const pid of [...pids, ...infra.filter((p) => p !== natsPid)])
        assert.ok(alive(pid), `pid ${pid} should be running before Ctrl-C`);

      await interrupt(run);
      await waitFor(
        () => [...pids, ...infra.filter((p) => p !== natsPid)].every((pid) => !alive(pid)),
        10_000,
        100,
        'every child to exit',
      );
      // The nats-server this test started is the test's to stop; everything the launcher started is gone.
      restartedNats.kill('SIGKILL');
      await waitFor(
        () => processesMentioning(dataDir).length === 0,
        10_000,
        100,
        'nothing started from the data folder to survive',
      );
    } finally {
      restartedNats?.kill('SIGKILL');
      try {
        process.kill(-run.launcher.pid, 'SIGKILL');
      } catch {
        // already gone, as it should be
      }
      rmSync(dataDir, { recursive: true, force: true });
    }
  },
);

test('npm start reaches Ready: while two busy processes keep both cores loaded', { timeout: 480_000 }, async () => {
  // Two processes that never sleep: every process the launcher starts competes with them for the CPU.
  const hogs = [0, 1].map(() => spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' }));
  const dataDir = mkdtempSync(join(tmpdir(), 'bns-launcher-busy-'));
  let run;
  try {
    await new Promise((r) => setTimeout(r, 2000));
    const load = loadavg()[0].toFixed(1);
    run = launch(dataDir, await freePort());
    const started = Date.now();
    // START_TIMEOUT_S (180 s) bounds each service's start; the Ready line comes after the last of them.
    await waitFor(
      () => /Ready: http:\/\/localhost:\d+|Could not start/.test(run.output),
      420_000,
      200,
      'Ready: or a failure',
    ).catch((err) => {
      throw new Error(`${err.message}\n${run.output}`);
    });
    assert.doesNotMatch(run.output, /Could not start|timed out|made no progress/, run.output);
    const seconds = ((Date.now() - started) / 1000).toFixed(1);
    process.stdout.write(
      `# launcher ready in ${seconds} s with 2 busy processes on ${cpus().length} cores (load average ${load} at the start, ${loadavg()[0].toFixed(1)} at Ready)\n`,
    );
    await interrupt(run);
  } finally {
    for (const hog of hogs) hog.kill('SIGKILL');
    if (run) {
      try {
        process.kill(-run.launcher.pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
    rmSync(dataDir, { recursive: true, force: true });
  }
});
