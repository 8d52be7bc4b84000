// CPU profiles of a running service for the benchmarks: start it with `--inspect=127.0.0.1:<port>`
// (NODE_OPTIONS), call `profileProcess(label, port)` before the measured stretch and the returned
// function after it; it prints the self time by package and by function.
import { writeFileSync } from 'node:fs';
import WebSocket from 'ws';

/** `saveTo`: also write the raw profile there (open it in Chrome DevTools). */
export async function profileProcess(label, port, { intervalUs = 500, top = 25, saveTo } = {}) {
  const [{ webSocketDebuggerUrl }] = await (await fetch(`http://127.0.0.1:${port}/json/list`)).json();
  const ws = new WebSocket(webSocketDebuggerUrl);
  await new Promise((resolve, reject) => {
    ws.once('open', resolve);
    ws.once('error', reject);
  });
  let id = 0;
  const pending = new Map();
  ws.on('message', (m) => {
    const msg = JSON.parse(m.toString());
    pending.get(msg.id)?.(msg.result);
    pending.delete(msg.id);
  });
  const send = (method, params = {}) =>
    new Promise((resolve) => {
      pending.set(++id, resolve);
      ws.send(JSON.stringify({ id, method, params }));
    });
  await send('Profiler.enable');
  await send('Profiler.setSamplingInterval', { interval: intervalUs });
  await send('Profiler.start');
  return async () => {
    const { profile } = await send('Profiler.stop');
    ws.close();
    if (saveTo) writeFileSync(saveTo, JSON.stringify(profile));
    const byId = new Map(profile.nodes.map((n) => [n.id, n]));
    const counts = new Map();
    for (const s of profile.samples) counts.set(s, (counts.get(s) ?? 0) + 1);
    const total = profile.samples.length;
    const byPackage = new Map();
    const byFunction = new Map();
    for (const [nodeId, n] of counts) {
      const { functionName, url, lineNumber } = byId.get(nodeId).callFrame;
      const tail = url.split('node_modules/').at(-1);
      const pkg = url.includes('node_modules/')
        ? tail
            .split('/')
            .slice(0, tail.startsWith('@') ? 2 : 1)
            .join('/')
        : url.startsWith('node:')
          ? 'node core'
          : url === ''
            ? `(${functionName || 'native'})`
            : url.replace(/^file:\/\/.*\/(services|libs)\//, '$1/');
      byPackage.set(pkg, (byPackage.get(pkg) ?? 0) + n);
      const fn = `${functionName || '(anonymous)'} ${url.includes('node_modules/') ? tail : pkg}:${lineNumber + 1}`;
      byFunction.set(fn, (byFunction.get(fn) ?? 0) + n);
    }
    const list = (m, k) =>
      [...m]
        .sort((a, b) => b[1] - a[1])
        .slice(0, k)
        .map(([name, n]) => `    ${((100 * n) / total).toFixed(1).padStart(5)}%  ${name}`)
        .join('\n');
    console.log(
      `  ${label} profile (self time, ${total} samples${saveTo ? `; written to ${saveTo}` : ''}):\n  by package:\n${list(byPackage, 15)}\n  by function:\n${list(byFunction, top)}`,
    );
  };
}

/** Asks the process with an inspector on `port` for a full garbage collection (HeapProfiler.collectGarbage). */
export async function collectGarbage(port) {
  const [{ webSocketDebuggerUrl }] = await (await fetch(`http://127.0.0.1:${port}/json/list`)).json();
  const ws = new WebSocket(webSocketDebuggerUrl);
  await new Promise((resolve, reject) => {
    ws.once('open', resolve);
    ws.once('error', reject);
  });
  await new Promise((resolve) => {
    ws.on('message', (m) => JSON.parse(m.toString()).id === 1 && resolve());
    ws.send(JSON.stringify({ id: 1, method: 'HeapProfiler.collectGarbage' }));
  });
  ws.close();
}
