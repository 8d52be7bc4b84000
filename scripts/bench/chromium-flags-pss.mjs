#!/usr/bin/env node
// What Chromium flags save for the webjs engine: each flag set launches the system Chromium the way the
// engine does (puppeteer, the engine's own arguments), opens a heavy page served locally (offline: a
// large DOM and about 80 MB of live JavaScript objects, a stand-in for a loaded WhatsApp Web), and
// sums PSS over the browser's process tree (/proc/<pid>/smaps_rollup). One run per set, in turn.
//   node scripts/bench/chromium-flags-pss.mjs [settleMs=4000]   (CHROMIUM_PATH, default /usr/bin/chromium)
import { createServer } from 'node:http';
import { readdirSync, readFileSync } from 'node:fs';
import puppeteer from 'puppeteer';

const SETTLE_MS = Number(process.argv[2] ?? 4000);
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
/** The engine's arguments (webjs.engine.ts realWebjsClient). */
const BASE = ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--disable-background-networking'];
const SETS = {
  'engine default': [],
  '--js-flags=--max-old-space-size=256': ['--js-flags=--max-old-space-size=256'],
  '--renderer-process-limit=1': ['--renderer-process-limit=1'],
  '--disable-features=…': [
    '--disable-features=Translate,OptimizationHints,MediaRouter,BackForwardCache,AudioServiceOutOfProcess,IsolateOrigins,site-per-process',
  ],
  '--disable-extensions + component extensions': [
    '--disable-extensions',
    '--disable-component-extensions-with-background-pages',
    '--disable-component-update',
  ],
  '--disable-site-isolation-trials': ['--disable-site-isolation-trials'],
  'all of the above': [
    '--js-flags=--max-old-space-size=256',
    '--renderer-process-limit=1',
    '--disable-features=Translate,OptimizationHints,MediaRouter,BackForwardCache,AudioServiceOutOfProcess,IsolateOrigins,site-per-process',
    '--disable-extensions',
    '--disable-component-extensions-with-background-pages',
    '--disable-component-update',
    '--disable-site-isolation-trials',
  ],
};

const HEAVY_PAGE = `<!doctype html><html><body><script>
  // A chat list: 20,000 rows of DOM, and ~80 MB of message objects kept alive like a loaded store.
  const list = document.createElement('ul');
  for (let i = 0; i < 20000; i++) {
    const li = document.createElement('li');
    li.innerHTML = '<b>Contact ' + i + '</b> <span>last message preview ' + 'x'.repeat(40) + '</span>';
    list.appendChild(li);
  }
  document.body.appendChild(list);
  window.store = [];
  for (let i = 0; i < 400000; i++) window.store.push({ id: 'msg' + i, body: 'm'.repeat(150) + i, t: Date.now(), ack: 3 });
  document.title = 'ready';
</script></body></html>`;

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const tree = (root) => {
  const byParent = new Map();
  for (const pid of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      const ppid = /PPid:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1];
      byParent.set(ppid, [...(byParent.get(ppid) ?? []), pid]);
    } catch {
      // exited meanwhile
    }
  }
  const out = [root];
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

const server = createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end(HEAVY_PAGE));
await new Promise((r) => server.listen(0, '127.0.0.1', r));
const url = `http://127.0.0.1:${server.address().port}/`;
const rows = [];
try {
  for (const [name, extra] of Object.entries(SETS)) {
    const browser = await puppeteer.launch({ executablePath: CHROMIUM, headless: true, args: [...BASE, ...extra] });
    try {
      const page = await browser.newPage();
      await page.goto(url);
      await page.waitForFunction(() => document.title === 'ready', { timeout: 60_000 });
      await sleep(SETTLE_MS);
      const pids = tree(String(browser.process().pid));
      const mib = pids.reduce((sum, pid) => sum + pssKiB(pid), 0) / 1024;
      rows.push({ name, processes: pids.length, mib });
      console.log(`${name}: ${pids.length} processes, PSS ${mib.toFixed(1)} MiB`);
    } finally {
      await browser.close();
    }
  }
} finally {
  server.close();
}
const base = rows[0].mib;
console.log('\nflag set | processes | PSS MiB | saved vs engine default');
for (const r of rows)
  console.log(
    `${r.name} | ${r.processes} | ${r.mib.toFixed(1)} | ${(base - r.mib).toFixed(1)} MiB (${(((base - r.mib) / base) * 100).toFixed(0)} %)`,
  );
