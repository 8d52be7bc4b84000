#!/usr/bin/env node
// Attachments under load: one account sends the same campaign twice at SEND_DELAY_MS=0, first as text,
// then with a 5 MB image (uploaded once, fetched once per sessions shard, sent to every recipient from
// that copy), and the messages/s of each; the RSS of the gateway, jobs and the sessions shards before,
// during (peak, sampled every 200 ms) and after; then a 64 MB document upload: its time and the
// gateway's peak RSS while it streams. Real Postgres and NATS, the built services (npm run build).
//   flock /tmp/bench.lock node scripts/bench/media.mjs [recipients=10000] [imageMiB=5] [documentMiB=64]
import { readFileSync } from 'node:fs';
import { MEDIA_UPLOAD_FIELD } from '@bns/contracts';
import { mediaFiles } from '@bns/testing';
import { countResults, linkedUsers, numbers, sleep, startBench, startJob, waitFor, warmUp } from './jobs-lib.mjs';

const RECIPIENTS = Number(process.argv[2] ?? 10_000);
const IMAGE_MIB = Number(process.argv[3] ?? 5);
const DOCUMENT_MIB = Number(process.argv[4] ?? 64);
const MiB = 1024 * 1024;

const rssMiB = (pid) => {
  try {
    return Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1]) / 1024;
  } catch {
    return NaN;
  }
};
const fmt = (n) => n.toFixed(1);

/** Peak RSS of each process while `work` runs (sampled every 200 ms). */
async function peakWhile(pids, work) {
  const peak = Object.fromEntries(Object.entries(pids).map(([k, pid]) => [k, rssMiB(pid)]));
  let running = true;
  const sampler = (async () => {
    while (running) {
      for (const [k, pid] of Object.entries(pids)) peak[k] = Math.max(peak[k], rssMiB(pid));
      await sleep(200);
    }
  })();
  try {
    return { result: await work(), peak };
  } finally {
    running = false;
    await sampler;
  }
}

async function upload(gateway, token, name, bytes) {
  const form = new FormData();
  form.append(MEDIA_UPLOAD_FIELD, new Blob([bytes]), name);
  const res = await fetch(`${gateway}/api/media`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}` },
    body: form,
  });
  const body = await res.json();
  if (res.status !== 201) throw new Error(`upload ${name}: ${res.status} ${JSON.stringify(body)}`);
  return body;
}

const bench = await startBench({ SEND_DELAY_MS: '0', SEND_JITTER_MS: '0' });
try {
  const { sys } = bench;
  const pids = {
    gateway: sys.gateway.process.pid,
    jobs: bench.jobsPid,
    ...Object.fromEntries(sys.services.filter((h) => h.name === 'sessions').map((h) => [h.label, h.process.pid])),
  };
  const [user] = await linkedUsers(bench, 1, 'media');
  const results = countResults(bench.nc);
  await warmUp(user, results);
  await sleep(2000);
  const before = Object.fromEntries(Object.entries(pids).map(([k, pid]) => [k, rssMiB(pid)]));

  /** One campaign to RECIPIENTS numbers, timed from its start to its last outcome. */
  const campaign = async (body, from) => {
    const base = results.total;
    const started = performance.now();
    await startJob(user, { ...body, phoneNumbers: numbers(RECIPIENTS, from) });
    await waitFor(() => results.total >= base + RECIPIENTS, 30 * 60_000, 50, 'the campaign');
    return RECIPIENTS / ((performance.now() - started) / 1000);
  };

  const text = await peakWhile(pids, () => campaign({ message: 'Spring sale: 20% off this week' }, 60_000_000));
  await sleep(2000);
  const image = await upload(sys.gateway.url, user.token, 'poster.png', mediaFiles.png(IMAGE_MIB * MiB - 1024));
  const withImage = await peakWhile(pids, () =>
    campaign({ message: 'Spring sale: 20% off this week', mediaId: image.mediaId }, 70_000_000),
  );
  await sleep(5000);
  const after = Object.fromEntries(Object.entries(pids).map(([k, pid]) => [k, rssMiB(pid)]));

  const document = mediaFiles.pdf('x'.repeat(DOCUMENT_MIB * MiB - 512));
  const gatewayBefore = rssMiB(pids.gateway);
  const docUpload = await peakWhile({ gateway: pids.gateway }, async () => {
    const t = performance.now();
    await upload(sys.gateway.url, user.token, 'catalogue.pdf', document);
    return (performance.now() - t) / 1000;
  });

  const load = readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
  console.log(`recipients ${RECIPIENTS}, image ${fmt(image.size / MiB)} MiB, SEND_DELAY_MS=0, one account`);
  console.log(`text:  ${fmt(text.result)} messages/s`);
  console.log(`image: ${fmt(withImage.result)} messages/s (${fmt(withImage.result / text.result)}× text)`);
  for (const k of Object.keys(pids)) {
    console.log(
      `${k} RSS MiB: before ${fmt(before[k])}, peak during text ${fmt(text.peak[k])}, during image ${fmt(withImage.peak[k])}, after ${fmt(after[k])}`,
    );
  }
  console.log(
    `upload of a ${fmt(document.length / MiB)} MiB PDF: ${docUpload.result.toFixed(2)} s; gateway RSS ${fmt(gatewayBefore)} MiB before, ${fmt(docUpload.peak.gateway)} MiB peak`,
  );
  console.log(`load average ${load}`);
} finally {
  await bench.stop();
}
