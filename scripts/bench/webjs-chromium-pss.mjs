#!/usr/bin/env node
// PSS of the Chromium one whatsapp-web.js client runs (the webjs engine's per-user cost). Offline,
// initialize() rejects after about a second, but the browser stays up until destroy(): it is measured
// then, summing Pss over the Chromium process tree (/proc/<pid>/smaps_rollup).
//   node scripts/bench/webjs-chromium-pss.mjs   (CHROMIUM_PATH, default /usr/bin/chromium)
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { realWebjsClient } from '../../services/sessions/dist/sessions/engines/webjs.engine.js';

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const children = () => {
  const byParent = new Map();
  for (const pid of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      const ppid = /PPid:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1];
      byParent.set(ppid, [...(byParent.get(ppid) ?? []), pid]);
    } catch {
      // exited meanwhile
    }
  }
  return byParent;
};
const tree = (root) => {
  const byParent = children();
  const out = [];
  const walk = (pid) => (byParent.get(pid) ?? []).forEach((c) => (out.push(c), walk(c)));
  walk(root);
  return out;
};
const pssKiB = (pid) => {
  try {
    return Number(/^Pss:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'))[1]);
  } catch {
    return 0;
  }
};

const dataPath = mkdtempSync(join(tmpdir(), 'bns-pss-'));
// The store is not what is measured: an empty one, so the browser starts on a fresh profile.
const store = {
  sessionExists: async () => false,
  save: async () => undefined,
  extract: async () => undefined,
  delete: async () => undefined,
};
const client = realWebjsClient({
  userId: 'pss',
  clientId: 'pss',
  store,
  dataPath,
  backupSyncIntervalMs: 60_000,
  chromiumPath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
  headless: true,
});
const started = Date.now();
const outcome = await client.initialize().then(
  () => 'initialized',
  (err) => `initialize rejected: ${err.message.split('\n')[0]}`,
);
console.log(`${outcome} after ${((Date.now() - started) / 1000).toFixed(1)} s`);
await sleep(5000);
const pids = tree(String(process.pid)).filter((pid) => {
  try {
    return readFileSync(`/proc/${pid}/comm`, 'utf8').trim().startsWith('chrom');
  } catch {
    return false;
  }
});
const total = pids.reduce((sum, pid) => sum + pssKiB(pid), 0);
console.log(`one webjs Chromium: ${pids.length} processes, PSS ${(total / 1024).toFixed(1)} MiB`);
await client.destroy();
rmSync(dataPath, { recursive: true, force: true });
