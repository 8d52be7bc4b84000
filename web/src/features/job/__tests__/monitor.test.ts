import { describe, expect, it } from 'vitest';
import { MESSAGES, pollIntervalMs } from '@bns/contracts';
import type { JobLog, JobView } from '../../../api/types.js';
import { LIVE_MIN_FETCH_GAP_MS, LIVE_SAFETY_POLL_MS, monitorJob, type MonitorDeps } from '../monitor.js';

const job = (status: JobView['status'], sent = 0): JobView => ({
  jobId: 'j1',
  status,
  progress: { total: 500, sent, failed: 0 },
  results: { successList: [], failedList: [] },
  error: null,
  estimatedTime: 1,
  nextSendAt: null,
  createdAt: '2025-01-01T00:00:00Z',
  startedAt: null,
  finishedAt: null,
});

/** Deps whose status answers come from `statuses` in turn; records every wait and callback. */
function harness(opts: {
  statuses: (JobView | { fail: unknown })[];
  logs?: (n: number) => JobLog[];
  live?: () => boolean;
}) {
  const waits: { ms: number; wake: boolean }[] = [];
  const seen = {
    status: [] as JobView[],
    logs: [] as JobLog[],
    errors: [] as string[],
    stopped: [] as string[],
    terminal: [] as JobView[],
    sinces: [] as (string | undefined)[],
  };
  let polls = 0;
  let logPolls = 0;
  const deps: MonitorDeps = {
    fetchStatus: async () => {
      const next = opts.statuses[Math.min(polls++, opts.statuses.length - 1)]!;
      if ('fail' in next) throw next.fail;
      return next;
    },
    fetchLogs: async (since) => {
      seen.sinces.push(since);
      return opts.logs?.(logPolls++) ?? [];
    },
    socketLive: opts.live ?? (() => false),
    wait: async (ms, wake) => {
      waits.push({ ms, wake });
    },
    onStatus: (j) => seen.status.push(j),
    onLogs: (l) => seen.logs.push(...l),
    onError: (m) => seen.errors.push(m),
    onStopped: (r) => seen.stopped.push(r),
    onTerminal: (j) => seen.terminal.push(j),
    isCancelled: () => false,
  };
  return { deps, waits, seen };
}

describe('monitorJob: the polling schedule of SPEC §9', () => {
  it('polls 1 s ×30, then 2 s to poll 90, 8 s to poll 200, then 10 s (logs keep coming)', async () => {
    const statuses = [...Array.from({ length: 250 }, (_, i) => job('running', i)), job('completed', 250)];
    const h = harness({
      statuses,
      logs: (n) => [
        { type: 'info', message: `line ${n}`, timestamp: new Date(1_700_000_000_000 + n * 1000).toISOString() },
      ],
    });
    expect(await monitorJob(h.deps)).toBe('terminal');
    const ms = h.waits.map((w) => w.ms);
    expect(ms).toHaveLength(250);
    expect(ms.slice(0, 29).every((m) => m === 1000)).toBe(true);
    expect(ms[29]).toBe(2000);
    expect(ms[88]).toBe(2000);
    expect(ms[89]).toBe(8000);
    expect(ms[198]).toBe(8000);
    expect(ms[199]).toBe(10_000);
    expect(ms).toEqual(ms.map((_, i) => pollIntervalMs(i + 1, 0)));
    expect(h.seen.terminal).toHaveLength(1);
  });

  it('asks for logs after the last one seen and slows to 15 s after two empty log polls', async () => {
    const statuses = [job('running'), job('running'), job('running'), job('running'), job('completed')];
    const h = harness({
      statuses,
      logs: (n) => (n === 0 ? [{ type: 'info', message: 'Job started', timestamp: '2025-01-01T00:00:00.000Z' }] : []),
    });
    await monitorJob(h.deps);
    expect(h.seen.sinces).toEqual([
      undefined,
      '2025-01-01T00:00:00.000Z',
      '2025-01-01T00:00:00.000Z',
      '2025-01-01T00:00:00.000Z',
      '2025-01-01T00:00:00.000Z',
    ]);
    expect(h.waits.map((w) => w.ms)).toEqual([1000, 1000, 15_000, 15_000]);
  });

  it('stops with a warning on 429 Too Many Requests', async () => {
    const h = harness({
      statuses: [
        job('running'),
        { fail: { status: 429, data: { success: false, error: 'Too Many Requests' } } },
        job('completed'),
      ],
    });
    expect(await monitorJob(h.deps)).toBe('stopped');
    expect(h.seen.stopped).toEqual(['Too Many Requests']);
    expect(h.seen.terminal).toHaveLength(0);
  });

  it('stops with a warning when a fetch fails (network)', async () => {
    const h = harness({ statuses: [{ fail: { status: 'FETCH_ERROR', error: 'TypeError: Failed to fetch' } }] });
    expect(await monitorJob(h.deps)).toBe('stopped');
    expect(h.seen.stopped).toHaveLength(1);
  });

  it('logs "Error monitoring job" on other errors and keeps going', async () => {
    const h = harness({ statuses: [{ fail: { status: 500, data: { error: 'boom' } } }, job('cancelled')] });
    expect(await monitorJob(h.deps)).toBe('terminal');
    expect(h.seen.errors).toEqual([`${MESSAGES.errorMonitoringJob}: boom`]);
    expect(h.seen.terminal[0]!.status).toBe('cancelled');
  });

  it('with the socket live, waits for events (15 s safety) at most once a second and does not poll logs until the end', async () => {
    const h = harness({ statuses: [job('running'), job('running'), job('completed')], live: () => true });
    await monitorJob(h.deps);
    expect(h.waits).toEqual([
      { ms: LIVE_SAFETY_POLL_MS, wake: true },
      { ms: LIVE_MIN_FETCH_GAP_MS, wake: false },
      { ms: LIVE_SAFETY_POLL_MS, wake: true },
      { ms: LIVE_MIN_FETCH_GAP_MS, wake: false },
    ]);
    // One final log fetch when the job ends, so its last lines are never missed.
    expect(h.seen.sinces).toEqual([undefined]);
  });

  it('ends quietly once cancelled (Go Back)', async () => {
    const h = harness({ statuses: [job('running')] });
    let n = 0;
    h.deps.isCancelled = () => ++n > 3;
    expect(await monitorJob(h.deps)).toBe('stopped');
    expect(h.seen.status).toHaveLength(3);
  });
});
