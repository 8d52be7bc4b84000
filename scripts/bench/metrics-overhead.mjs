#!/usr/bin/env node
// What the Prometheus metrics cost: the metric work one sent message does on its way (the jobs →
// sessions request timed on both ends, the result counter, the pace-lag observation), in ns, and the
// time to render a registry holding those series. The end-to-end view is jobs-throughput with and
// without the metrics commit; on a shared machine its noise is far above this figure.
// Build first (libs/service-kit).   node scripts/bench/metrics-overhead.mjs [iterations=1000000]
import { counter, histogram, metricsRegistry, recordRpcClient, recordRpcServer } from '@bns/service-kit';

const N = Number(process.argv[2] ?? 1_000_000);
const messages = counter({ name: 'bench_messages_total', help: 'bench', labelNames: ['result', 'reason'] });
const lag = histogram({
  name: 'bench_pace_lag_seconds',
  help: 'bench',
  buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
});

function perMessage(i) {
  recordRpcClient(`sessions.${i % 2}.send`, 'ok', 0.003 + (i % 7) / 1000);
  recordRpcServer(`sessions.${i % 2}.send`, 'ok', 0.002 + (i % 5) / 1000);
  messages.inc({ result: 'sent', reason: 'none' });
  lag.observe((i % 11) / 1000);
}

for (let i = 0; i < 100_000; i++) perMessage(i); // warm-up
const t0 = process.hrtime.bigint();
for (let i = 0; i < N; i++) perMessage(i);
const ns = Number(process.hrtime.bigint() - t0) / N;
const renders = [];
for (let i = 0; i < 20; i++) {
  const t = performance.now();
  await metricsRegistry.metrics();
  renders.push(performance.now() - t);
}
renders.sort((a, b) => a - b);
console.log(`metric work per sent message: ${ns.toFixed(0)} ns (${N.toLocaleString('en-US')} messages)`);
console.log(`rendering the registry: median ${renders[10].toFixed(2)} ms`);
