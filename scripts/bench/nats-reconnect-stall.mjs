#!/usr/bin/env node
// How long callers stall when NATS restarts under them. N callers ("accounts") each send requests one
// after another through service-kit's RpcClient to a responder; the broker is killed (-9) and started
// again on the same port and store. A caller does what the jobs service does: a request that failed
// because the connection dropped (NATS_DISCONNECTED) is retried as soon as the connection is back; any
// other failure (a timeout) waits the retry delay first. Printed: the broker's downtime and, per caller,
// the gap between its last reply before the restart and its first reply after (median, max).
// Build first (libs/service-kit, libs/testing).
//   node scripts/bench/nats-reconnect-stall.mjs [callers=20] [rpcTimeoutMs=10000] [retryWaitMs=2000]
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connectNats, RpcClient } from '@bns/service-kit';
import { sleep, startNats } from '@bns/testing';

const CALLERS = Number(process.argv[2] ?? 20);
const RPC_TIMEOUT_MS = Number(process.argv[3] ?? 10_000);
const RETRY_WAIT_MS = Number(process.argv[4] ?? 2000);

const storeDir = mkdtempSync(join(tmpdir(), 'bns-stall-'));
let nats = await startNats({ storeDir });
const responder = await connectNats(nats.url, 'stall-responder');
// A handler that takes a few milliseconds, like a real one.
responder.subscribe('templates.ping', {
  callback: (_e, m) => setTimeout(() => m.respond(JSON.stringify({ response: { ok: true }, isDisposed: true })), 5),
});
const caller = await connectNats(nats.url, 'stall-caller');
const rpc = new RpcClient(caller, { shards: 1, timeoutMs: RPC_TIMEOUT_MS });

let running = true;
const replies = Array.from({ length: CALLERS }, () => []);
const failures = { disconnected: 0, other: 0 };

async function callerLoop(i) {
  while (running) {
    try {
      await rpc.request('templates.ping', {});
      replies[i].push(performance.now());
    } catch (err) {
      if (err?.code === 'NATS_DISCONNECTED' && typeof rpc.whenConnected === 'function') {
        failures.disconnected++;
        await rpc.whenConnected(60_000).catch(() => undefined);
      } else {
        failures.other++;
        await sleep(RETRY_WAIT_MS);
      }
    }
  }
}

const loops = replies.map((_, i) => callerLoop(i));
await sleep(2000);
const killedAt = performance.now();
await nats.process.kill9();
nats = await startNats({ storeDir, port: nats.port });
const upAt = performance.now();
await sleep(Math.max(RPC_TIMEOUT_MS + RETRY_WAIT_MS + 3000, 8000));
running = false;
await Promise.all(loops);

const gaps = replies
  .map((times) => {
    const before = times.filter((t) => t < killedAt).at(-1);
    const after = times.find((t) => t > killedAt);
    return before === undefined || after === undefined ? Infinity : after - before;
  })
  .sort((a, b) => a - b);
const fmt = (ms) => (Number.isFinite(ms) ? `${(ms / 1000).toFixed(2)} s` : 'never');
console.log(
  `NATS down for ${fmt(upAt - killedAt)} (kill -9 → restarted); ${CALLERS} callers, RPC_TIMEOUT_MS ${RPC_TIMEOUT_MS}, retry wait ${RETRY_WAIT_MS} ms`,
);
console.log(
  `stall per caller (last reply before → first reply after): median ${fmt(gaps[Math.floor(gaps.length / 2)])}, max ${fmt(gaps.at(-1))}`,
);
console.log(
  `failures seen by callers: ${failures.disconnected} NATS_DISCONNECTED (retried on reconnect, not counted), ${failures.other} other (timeouts: counted, retry wait)`,
);

await caller.close();
await responder.close();
await nats.stop();
rmSync(storeDir, { recursive: true, force: true });
process.exit(0);
