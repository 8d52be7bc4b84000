import {
  isBlankText,
  JOB_MESSAGES,
  LIMITS,
  MESSAGES,
  placeholdersIn,
  WEB_MESSAGES,
  type JobHistoryItem,
  type JobStatus,
} from '@bns/contracts';
import { api } from '../../api/api.js';
import { errorMessage, httpStatus, isNetworkError } from '../../api/errors.js';
import { fetchOnce } from '../../api/fetchOnce.js';
import type { StartJobBody } from '../../api/types.js';
import type { AppThunk } from '../../app/store.js';
import { logAdded } from '../activity/slice.js';
import { newIdempotencyKey } from '../results/idempotency.js';
import { hasVariables, missingValuesOf, recipientsOf, templateUseCounted } from '../sender/slice.js';
import { toast } from '../toasts/toasts.js';
import { checkSchedule, scheduleRefusalText } from '../pacing/schedule.js';
import { scheduleUsed } from '../pacing/slice.js';
import { resultsApi } from '../results/resultsApi.js';
import { activeJobFound, isTerminal, jobStartFailed, jobStarted, jobStartRequested } from './slice.js';

/**
 * Start Sending, after the confirm dialog (SPEC §4 "Bulk send", §5 "Sending screen"). Resolves true once
 * the server accepted the job, false when nothing was started (and the user was told why).
 */
export const startSending = (): AppThunk<Promise<boolean>> => async (dispatch, getState) => {
  const { sender, session, connection, job } = getState();
  // Blank as the server judges it: only spaces or invisible characters (zero-width, U+FEFF…) show nothing.
  if (isBlankText(sender.message)) {
    toast.error(MESSAGES.enterMessageFirst);
    return false;
  }
  if (sender.phoneNumbers.length === 0) {
    toast.error(MESSAGES.addPhoneNumbersFirst);
    return false;
  }
  if (connection.status !== 'connected') {
    toast.error(JOB_MESSAGES.notLinked);
    return false;
  }
  if (job.phase !== 'setup') {
    toast.error(WEB_MESSAGES.useWhileSending);
    return false;
  }
  // The checklist's rule, again here: a send whose {{variable}} has no value for someone does not start.
  if (missingValuesOf(sender, placeholdersIn(sender.message.slice(0, LIMITS.messageMaxLength))).length > 0) {
    toast.error(WEB_MESSAGES.sendBlockedMissingValues);
    return false;
  }

  const total = sender.phoneNumbers.length;
  // SPEC §5: the message is cut to 1000 characters before sending.
  const message = sender.message.slice(0, LIMITS.messageMaxLength);
  const body: StartJobBody = hasVariables(sender)
    ? { message, recipients: recipientsOf(sender), clientId: session.clientId, clerkUserId: session.userId }
    : { message, phoneNumbers: [...sender.phoneNumbers], clientId: session.clientId, clerkUserId: session.userId };

  // Send later: the job waits as `scheduled` until then (the sending policy's startAt). The time is
  // checked again now: one that was fine when chosen may have passed while the confirm was open.
  const { pacing } = getState();
  const startAt = pacing.later ? pacing.startAt : null;
  if (pacing.later) {
    const schedule = checkSchedule(startAt);
    if (!schedule.ok) {
      toast.error(schedule.message);
      return false;
    }
  }
  if (startAt) body.startAt = startAt;
  if (sender.attachment) body.mediaId = sender.attachment.mediaId;
  dispatch(jobStartRequested({ total }));
  // "Job accepted" is dated when the request left, so it sorts below the job's own first lines.
  const requestedAt = new Date().toISOString();
  try {
    // One key per confirmed send; a start that got no answer is retried once with the same key,
    // so it returns the job it may have made instead of making a second one.
    const idempotencyKey = newIdempotencyKey();
    const send = () => dispatch(api.endpoints.startBulkMessages.initiate({ ...body, idempotencyKey })).unwrap();
    const answer = await send().catch((e: unknown) =>
      isNetworkError(e) || httpStatus(e) === 503 ? send() : Promise.reject(e),
    );
    dispatch(jobStarted({ jobId: answer.jobId, estimatedTime: answer.estimatedTime, total }));
    if (sender.templateId) void dispatch(countTemplateUse(sender.templateId));
    if (startAt) dispatch(scheduleUsed());
    dispatch(
      logAdded({
        type: 'info',
        message: `${WEB_MESSAGES.jobAccepted}: ${total} recipient${total === 1 ? '' : 's'}, estimated ${answer.estimatedTime} min`,
        timestamp: requestedAt,
      }),
    );
    return true;
  } catch (e) {
    const unavailable = isNetworkError(e) || httpStatus(e) === 503;
    const reason = unavailable ? MESSAGES.senderUnavailable : (scheduleRefusalText(errorMessage(e)) ?? errorMessage(e));
    dispatch(logAdded({ type: 'error', message: `${MESSAGES.errorStartingJob}: ${reason}` }));
    toast.error(`${MESSAGES.errorStartingJob}: ${reason}`);
    dispatch(jobStartFailed());
    return false;
  }
};

/**
 * SPEC §7 "POST …/use increments usage": once per accepted send that came from a template. A failed
 * count is only a console warning (SPEC §8): sending has already started.
 */
const countTemplateUse =
  (templateId: string): AppThunk =>
  async (dispatch, getState) => {
    dispatch(templateUseCounted());
    try {
      await dispatch(
        api.endpoints.useTemplate.initiate({ userId: getState().session.userId, id: templateId }),
      ).unwrap();
    } catch (e) {
      console.warn('Template usage was not counted', e);
    }
  };

export const cancelJob = (): AppThunk => async (dispatch, getState) => {
  const { jobId } = getState().job;
  if (!jobId) return;
  try {
    await dispatch(api.endpoints.cancelJob.initiate(jobId)).unwrap();
  } catch (e) {
    toast.error(errorMessage(e));
  }
};

/** Which active job a reloaded tab follows when there are several: one that is sending comes first. */
const FOLLOW_ORDER: readonly JobStatus[] = ['running', 'paused', 'queued', 'scheduled'];

/** The job a reloaded tab should show: the newest one of the most urgent active status, if any. */
export function activeJobOf(jobs: readonly JobHistoryItem[]): JobHistoryItem | undefined {
  const active = jobs.filter((j) => !isTerminal(j.status));
  // The list is newest first, and sort is stable: within a status the newest stays first.
  return [...active].sort((a, b) => FOLLOW_ORDER.indexOf(a.status) - FOLLOW_ORDER.indexOf(b.status))[0];
}

/**
 * On load (a reload, a new sign-in, another tab): a job still queued, scheduled, running or paused on
 * the server is shown in Step 3 again and followed, as before the reload. The server's list of the
 * user's unfinished jobs (newest first) is the one place that knows; a failed look-up leaves the setup
 * as it is.
 */
export const resumeActiveJob = (): AppThunk => async (dispatch, getState) => {
  const { session } = getState();
  let jobs: readonly JobHistoryItem[];
  try {
    // Only the unfinished ones (at most JOBS_MAX_ACTIVE_PER_USER), however many finished jobs came after them.
    ({ jobs } = await fetchOnce(
      dispatch(
        resultsApi.endpoints.getJobHistory.initiate({ userId: session.userId, active: true }, { forceRefetch: true }),
      ),
    ));
  } catch {
    return;
  }
  const job = activeJobOf(jobs);
  // The user may have started a send while the list was on its way: that one stays on screen.
  if (!job || getState().job.phase !== 'setup') return;
  dispatch(activeJobFound({ jobId: job.jobId, status: job.status, progress: job.progress }));
  const { total, sent } = job.progress;
  dispatch(logAdded({ type: 'info', message: `Following your ${job.status} job again: ${sent} of ${total} sent` }));
};
