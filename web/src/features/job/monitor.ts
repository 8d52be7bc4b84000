import { MESSAGES, pollIntervalMs } from '@bns/contracts';
import { errorMessage, isNetworkError, isRateLimited } from '../../api/errors.js';
import type { JobLog, JobView } from '../../api/types.js';
import { isTerminal } from './slice.js';

/** While the socket is live, a status fetch still happens this often in case an event was missed. */
export const LIVE_SAFETY_POLL_MS = 15_000;
/** While live, status fetches (for the result lists) are at most this frequent however fast events come. */
export const LIVE_MIN_FETCH_GAP_MS = 1_000;

export interface MonitorDeps {
  fetchStatus(): Promise<JobView>;
  fetchLogs(since: string | undefined): Promise<JobLog[]>;
  /** True while the socket is connected (job_progress / job_log arrive by push). */
  socketLive(): boolean;
  /** Sleeps `ms`; when `wakeOnEvent`, returns early once the socket reports progress of this job. */
  wait(ms: number, wakeOnEvent: boolean): Promise<void>;
  onStatus(job: JobView): void;
  onLogs(logs: JobLog[]): void;
  /** A polling error that does not stop monitoring ("Error monitoring job"). */
  onError(message: string): void;
  /** 429 or a failed fetch: monitoring stops with a warning (SPEC §4.6, §8). */
  onStopped(reason: string): void;
  onTerminal(job: JobView): void;
  /** True once the user went back or started another job: the loop ends quietly. */
  isCancelled(): boolean;
}

export type MonitorOutcome = 'terminal' | 'stopped';

/**
 * Follows one job until it ends. With the socket up, events drive it (a status fetch after each
 * progress event, at most once a second, fills the result lists); with the socket down it polls
 * status and logs on the spec's schedule (pollIntervalMs: 1 s ×30, 2 s to 90, 8 s to 200, then 10 s;
 * 15 s after two polls without new logs).
 */
export async function monitorJob(deps: MonitorDeps): Promise<MonitorOutcome> {
  let polls = 0;
  let emptyLogPolls = 0;
  let since: string | undefined;

  const pullLogs = async () => {
    const logs = await deps.fetchLogs(since);
    if (logs.length > 0) {
      since = logs[logs.length - 1]!.timestamp;
      emptyLogPolls = 0;
      deps.onLogs(logs);
    } else {
      emptyLogPolls++;
    }
  };

  for (;;) {
    if (deps.isCancelled()) return 'stopped';
    const live = deps.socketLive();
    try {
      const job = await deps.fetchStatus();
      deps.onStatus(job);
      if (!live) await pullLogs();
      if (isTerminal(job.status)) {
        // The last lines (e.g. "Job was cancelled") may not have been pushed or polled yet.
        if (live) await pullLogs().catch(() => undefined);
        deps.onTerminal(job);
        return 'terminal';
      }
    } catch (e) {
      // A request lost to a network drop while the socket is connected again (it reconnected while this
      // fetch was failing): the server is back, so following goes on instead of stopping now.
      const backAlready = isNetworkError(e) && deps.socketLive();
      if (!backAlready && (isRateLimited(e) || isNetworkError(e))) {
        deps.onStopped(errorMessage(e));
        return 'stopped';
      }
      if (backAlready) {
        polls++;
        await deps.wait(LIVE_MIN_FETCH_GAP_MS, false);
        continue;
      }
      deps.onError(`${MESSAGES.errorMonitoringJob}: ${errorMessage(e)}`);
    }
    polls++;
    if (live) {
      await deps.wait(LIVE_SAFETY_POLL_MS, true);
      await deps.wait(LIVE_MIN_FETCH_GAP_MS, false);
    } else {
      await deps.wait(pollIntervalMs(polls, emptyLogPolls), false);
    }
  }
}
