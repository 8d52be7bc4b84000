import { LIMITS, MESSAGES, WEB_MESSAGES } from '@bns/contracts';
import { api } from '../../api/api.js';
import { errorMessage, httpStatus, isNetworkError } from '../../api/errors.js';
import type { StartJobBody } from '../../api/types.js';
import type { AppThunk } from '../../app/store.js';
import { logAdded } from '../activity/slice.js';
import { hasVariables, recipientsOf } from '../sender/slice.js';
import { toast } from '../toasts/toasts.js';
import { jobStartFailed, jobStarted, jobStartRequested } from './slice.js';

/** Start Sending, after the confirm dialog (SPEC §4 "Bulk send", §5 "Sending screen"). */
export const startSending = (): AppThunk => async (dispatch, getState) => {
  const { sender, session, connection, job } = getState();
  if (sender.message.trim() === '') {
    toast.error(MESSAGES.enterMessageFirst);
    return;
  }
  if (sender.phoneNumbers.length === 0) {
    toast.error(MESSAGES.addPhoneNumbersFirst);
    return;
  }
  if (connection.status !== 'connected' || job.phase !== 'setup') return;

  const total = sender.phoneNumbers.length;
  // SPEC §5: the message is cut to 1000 characters before sending.
  const message = sender.message.slice(0, LIMITS.messageMaxLength);
  const body: StartJobBody = hasVariables(sender)
    ? { message, recipients: recipientsOf(sender), clientId: session.clientId, clerkUserId: session.userId }
    : { message, phoneNumbers: [...sender.phoneNumbers], clientId: session.clientId, clerkUserId: session.userId };

  dispatch(jobStartRequested({ total }));
  try {
    const answer = await dispatch(api.endpoints.startBulkMessages.initiate(body)).unwrap();
    dispatch(jobStarted({ jobId: answer.jobId, estimatedTime: answer.estimatedTime, total }));
    dispatch(
      logAdded({ type: 'info', message: `${WEB_MESSAGES.jobAccepted}: ${total} recipient${total === 1 ? '' : 's'}, estimated ${answer.estimatedTime} min` }),
    );
  } catch (e) {
    const unavailable = isNetworkError(e) || httpStatus(e) === 503;
    const reason = unavailable ? MESSAGES.senderUnavailable : errorMessage(e);
    dispatch(logAdded({ type: 'error', message: `${MESSAGES.errorStartingJob}: ${reason}` }));
    toast.error(`${MESSAGES.errorStartingJob}: ${reason}`);
    dispatch(jobStartFailed());
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
