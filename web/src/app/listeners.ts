import type { TypedStartListening } from '@reduxjs/toolkit';
import { JOB_MESSAGES, LIMITS, MESSAGES, WEB_MESSAGES } from '@bns/contracts';
import { api } from '../api/api.js';
import { errorMessage } from '../api/errors.js';
import { fetchOnce } from '../api/fetchOnce.js';
import type { JobLog } from '../api/types.js';
import { jobLogKey, logAdded } from '../features/activity/slice.js';
import {
  checkStarted,
  connectRequested,
  connectTimedOut,
  checkTimedOut,
  noSession,
  qrMaxAttempts,
  qrReceived,
  sessionCreating,
  sessionDisconnected,
  sessionReady,
} from '../features/connection/slice.js';
import { createSessionRequested, inboundMessageReceived } from '../features/connection/socketMiddleware.js';
import { monitorJob } from '../features/job/monitor.js';
import {
  activeJobFound,
  isTerminal,
  jobProgressEvent,
  jobStarted,
  jobStatusReceived,
  monitoringResumed,
  monitoringStopped,
} from '../features/job/slice.js';
import { contactsApi } from '../features/contacts/contactsApi.js';
import { optOutsApi } from '../features/optouts/optOutsApi.js';
import { patchJobHistory, resultsApi } from '../features/results/resultsApi.js';
import { toast } from '../features/toasts/toasts.js';
import type { RootState } from './state.js';

type StartListening = TypedStartListening<RootState>;

/** How long after a reply arrives the opt-outs are asked again (the jobs service commits it meanwhile). */
export const OPT_OUT_RECHECK_MS = 1_000;

/** Side effects that follow actions: the 30 s timeouts, the keep-alive log, job monitoring. */
export function registerListeners(startListening: StartListening): void {
  // SPEC §4.1: checking lasts at most 30 s, then the manual Connect button.
  // The timer starts once, when checking begins (on load); a socket connecting later does not restart it.
  startListening({
    predicate: (action, current, previous) =>
      checkStarted.match(action) &&
      previous.connection.status === 'unknown' &&
      current.connection.status === 'checking',
    effect: async (_a, l) => {
      l.cancelActiveListeners();
      const answered = await l.condition(
        (_action, s) => s.connection.status !== 'checking',
        LIMITS.sessionCheckTimeoutMs,
      );
      if (!answered && l.getState().connection.status === 'checking') {
        l.dispatch(checkTimedOut());
        l.dispatch(logAdded({ type: 'warning', message: WEB_MESSAGES.sessionCheckTimedOut }));
      }
    },
  });

  // SPEC §4.3: the connecting spinner (and "creating") lasts at most 30 s.
  startListening({
    predicate: (action, s) =>
      (connectRequested.match(action) || sessionCreating.match(action)) &&
      (s.connection.status === 'connecting' || s.connection.status === 'creating'),
    effect: async (action, l) => {
      l.cancelActiveListeners();
      if (connectRequested.match(action)) {
        l.dispatch(createSessionRequested({ explicit: true }));
        l.dispatch(logAdded({ type: 'info', message: 'Connecting WhatsApp…' }));
      }
      const moved = await l.condition(
        (_action, s) => s.connection.status !== 'connecting' && s.connection.status !== 'creating',
        LIMITS.connectTimeoutMs,
      );
      if (!moved) {
        l.dispatch(connectTimedOut());
        l.dispatch(logAdded({ type: 'warning', message: WEB_MESSAGES.connectTimedOut }));
        toast.warning(WEB_MESSAGES.connectTimedOut);
      }
    },
  });

  startListening({
    actionCreator: qrReceived,
    effect: (a, l) => {
      l.dispatch(
        logAdded({ type: 'info', message: `QR code ready (attempt ${a.payload.attempts} of ${LIMITS.qrMaxAttempts})` }),
      );
    },
  });

  startListening({
    actionCreator: qrMaxAttempts,
    effect: (a, l) => {
      l.dispatch(
        logAdded({
          type: 'warning',
          message: `${a.payload.message} (${a.payload.attempts} attempts). ${MESSAGES.qrMaxAttemptsRefresh}`,
        }),
      );
    },
  });

  // SPEC §4.5: ready/exist start a keep-alive entry every 10 minutes, until the link is gone.
  // The createSession ack and the room's `exist` event both say so after a load: one entry, one loop.
  startListening({
    predicate: (action, _current, previous) => sessionReady.match(action) && previous.connection.status !== 'connected',
    effect: async (_a, l) => {
      l.cancelActiveListeners();
      l.dispatch(logAdded({ type: 'success', message: WEB_MESSAGES.whatsappConnected }));
      for (;;) {
        await l.delay(LIMITS.keepAliveLogMs);
        if (l.getState().connection.status !== 'connected') return;
        l.dispatch(logAdded({ type: 'info', message: WEB_MESSAGES.keepAlive }));
      }
    },
  });

  startListening({
    predicate: (action, current, previous) =>
      (sessionDisconnected.match(action) || noSession.match(action)) &&
      previous.connection.status === 'connected' &&
      current.connection.status !== 'connected' &&
      // A normal sign-out unlinks on purpose: the landing page is not greeted with a warning.
      !current.connection.signingOut,
    effect: (_a, l) => {
      l.dispatch(logAdded({ type: 'warning', message: WEB_MESSAGES.whatsappDisconnected }));
      toast.warning(WEB_MESSAGES.whatsappDisconnected);
    },
  });

  // SPEC §4.4: follow a started job until it ends (socket first, polling as the fallback).
  // "Resume monitoring" starts the same loop again for the job on screen.
  // A job picked up after a reload (activeJobFound) is followed the same way, its earlier log lines first.
  startListening({
    predicate: (action, current) =>
      jobStarted.match(action) ||
      (activeJobFound.match(action) && current.job.jobId === action.payload.jobId) ||
      (monitoringResumed.match(action) && current.job.monitoring),
    effect: async (action, l) => {
      l.cancelActiveListeners();
      const jobId =
        jobStarted.match(action) || activeJobFound.match(action) ? action.payload.jobId : l.getState().job.jobId;
      if (!jobId) return;
      if (monitoringResumed.match(action))
        l.dispatch(logAdded({ type: 'info', message: WEB_MESSAGES.monitoringResumed }));
      const addLogs = (logs: readonly JobLog[]) => {
        for (const log of logs)
          l.dispatch(
            logAdded({ type: log.type, message: log.message, timestamp: log.timestamp, key: jobLogKey(jobId, log) }),
          );
      };
      if (activeJobFound.match(action)) {
        // What the log showed before the reload (the socket only pushes what comes next).
        await fetchOnce(l.dispatch(api.endpoints.getJobLogs.initiate({ jobId }, { forceRefetch: true }))).then(
          addLogs,
          () => undefined,
        );
      }
      const ours = () => l.getState().job.jobId === jobId;
      const outcome = await monitorJob({
        fetchStatus: () => fetchOnce(l.dispatch(api.endpoints.getJobStatus.initiate(jobId, { forceRefetch: true }))),
        fetchLogs: (since) =>
          fetchOnce(l.dispatch(api.endpoints.getJobLogs.initiate({ jobId, since }, { forceRefetch: true }))),
        socketLive: () => l.getState().connection.socket === 'connected',
        wait: async (ms, wakeOnEvent) => {
          // Once the socket said the job ended, fetch the final lists almost at once: the counters
          // already show the end, and the lists must not lag behind them.
          if (isTerminal(l.getState().job.status)) return wakeOnEvent ? undefined : l.delay(Math.min(ms, 200));
          if (!wakeOnEvent) return l.delay(ms);
          await l.condition((action) => jobProgressEvent.match(action) && action.payload.jobId === jobId, ms);
        },
        isCancelled: () => !ours(),
        onStatus: (job) => {
          if (ours()) l.dispatch(jobStatusReceived(job));
        },
        onLogs: addLogs,
        onError: (message) => l.dispatch(logAdded({ type: 'error', message })),
        onStopped: (reason) => {
          l.dispatch(monitoringStopped());
          l.dispatch(logAdded({ type: 'warning', message: `${WEB_MESSAGES.monitoringStopped} (${reason})` }));
          toast.warning(WEB_MESSAGES.monitoringStopped);
        },
        onTerminal: () => {
          if (ours()) l.dispatch(monitoringStopped());
        },
      }).catch((e: unknown) => {
        // A cancelled listener (Go Back, sign-out) ends the loop by throwing; anything else is logged.
        if ((e as { name?: string })?.name === 'TaskAbortError') return 'stopped' as const;
        l.dispatch(logAdded({ type: 'error', message: `${MESSAGES.errorMonitoringJob}: ${errorMessage(e)}` }));
        return 'stopped' as const;
      });
      void outcome;
    },
  });

  // The Campaigns card follows every job of the user as the socket reports it (also jobs of other tabs):
  // counts and status in place, and the list read again when a job ends (finish time, receipts) or when
  // a job it does not hold yet shows up.
  const unknownJobs = new Set<string>();
  startListening({
    actionCreator: jobProgressEvent,
    effect: (action, l) => {
      const { jobId, status } = action.payload;
      const found = patchJobHistory(l.dispatch, l.getState(), action.payload);
      if (isTerminal(status) || (!found && !unknownJobs.has(jobId))) {
        if (!found) unknownJobs.add(jobId);
        l.dispatch(resultsApi.util.invalidateTags(['JobHistory']));
      }
    },
  });
  startListening({
    actionCreator: jobStarted,
    effect: (_a, l) => {
      l.dispatch(resultsApi.util.invalidateTags(['JobHistory']));
    },
  });

  // A reply may be an opt-out keyword (STOP): the jobs service records it from the same event, so the
  // review's "will be skipped" note and the Opt-outs card ask again once it has had a moment to commit.
  startListening({
    actionCreator: inboundMessageReceived,
    effect: async (_a, l) => {
      l.cancelActiveListeners();
      await l.delay(OPT_OUT_RECHECK_MS);
      l.dispatch(optOutsApi.util.invalidateTags(['OptOuts']));
    },
  });

  // A reply is in the inbox as soon as the contacts service has folded it in, and on the campaign it
  // answered once the jobs service has: the inbox (and the tab's badge) and the campaigns' counts (the
  // progress view's Replied, even of a finished job) are asked again a moment after message_received.
  startListening({
    actionCreator: inboundMessageReceived,
    effect: async (_a, l) => {
      l.cancelActiveListeners();
      await l.delay(OPT_OUT_RECHECK_MS);
      l.dispatch(contactsApi.util.invalidateTags(['Conversations', 'Contacts']));
      l.dispatch(resultsApi.util.invalidateTags(['JobHistory']));
    },
  });

  // A job reaching its end (by a socket event or a status poll, whichever comes first) is reported once,
  // even if the user goes back before the monitor's last fetch.
  startListening({
    predicate: (_action, current, previous) =>
      current.job.jobId !== null &&
      current.job.jobId === previous.job.jobId &&
      !isTerminal(previous.job.status) &&
      isTerminal(current.job.status),
    effect: (_action, l) => {
      const job = l.getState().job;
      const recent = l.getState().activity.entries.slice(0, 20);
      const logOnce = (type: 'success' | 'error' | 'warning', message: string) => {
        if (!recent.some((e) => e.message === message)) l.dispatch(logAdded({ type, message }));
      };
      if (job.status === 'completed') {
        // The same words as the server's own log line, so the line shows once whichever arrives first.
        const text = JOB_MESSAGES.jobCompleted(job.progress.sent, job.progress.failed);
        logOnce('success', text);
        toast.success(text);
      } else if (job.status === 'failed') {
        logOnce('error', job.error ?? 'Job failed');
        toast.error(job.error ?? 'Job failed');
      } else if (job.status === 'cancelled') {
        logOnce('warning', MESSAGES.jobCancelled);
        toast.info(MESSAGES.jobCancelled);
      }
      // The dashboard, the campaigns (and template usage) change with every job.
      l.dispatch(api.util.invalidateTags(['Dashboard']));
      l.dispatch(resultsApi.util.invalidateTags(['JobHistory']));
    },
  });
}
