import {
  MEDIA_MESSAGES,
  RESULTS_LIMITS,
  RESULTS_MESSAGES,
  type JobHistoryItem,
  type JobResultsPage,
} from '@bns/contracts';
import { api } from '../../api/api.js';
import { errorMessage } from '../../api/errors.js';
import { fetchOnce } from '../../api/fetchOnce.js';
import type { Recipient } from '../../api/types.js';
import type { AppThunk } from '../../app/store.js';
import { resultsApi } from '../results/resultsApi.js';
import { attachmentSet, messageChanged, recipientsImported, templateLoaded } from '../sender/slice.js';
import { toast } from '../toasts/toasts.js';
import { tabSelected } from '../ui/slice.js';

/**
 * "Send again": the campaign's message and every recipient (with its variables when it was
 * personalised) go into the sender, read from the report page by page; the user reviews and sends.
 */
export const sendAgain =
  (job: Pick<JobHistoryItem, 'jobId' | 'message' | 'attachment'>): AppThunk<Promise<boolean>> =>
  async (dispatch) => {
    const recipients: Recipient[] = [];
    let optedOut = 0;
    let cursor: string | null = null;
    try {
      do {
        const page: JobResultsPage = await fetchOnce(
          dispatch(
            resultsApi.endpoints.getJobResults.initiate(
              { jobId: job.jobId, cursor, limit: RESULTS_LIMITS.reportPageMax },
              { forceRefetch: true },
            ),
          ),
        );
        for (const r of page.results) {
          // An opted-out number is left out (it asked not to get messages), with a note, not a missing-value error.
          if (r.status === 'skipped' && r.error === 'opted_out') {
            optedOut += 1;
            continue;
          }
          recipients.push({ phone: r.phoneNumber, variables: r.variables ?? {} });
        }
        cursor = page.nextCursor;
      } while (cursor);
    } catch (e) {
      toast.error(`${RESULTS_MESSAGES.reportLoadFailed}: ${errorMessage(e)}`);
      return false;
    }
    dispatch(templateLoaded({ message: job.message, phoneNumbers: [] }));
    if (recipients.some((r) => Object.keys(r.variables).length > 0)) dispatch(recipientsImported(recipients));
    else dispatch(templateLoaded({ message: job.message, phoneNumbers: recipients.map((r) => r.phone) }));
    dispatch(messageChanged(job.message));
    // Its attachment too, while it is still stored (unused ones are deleted after the retention period).
    if (job.attachment) {
      const read = dispatch(api.endpoints.getMedia.initiate(job.attachment.mediaId, { subscribe: false }));
      try {
        const media = await read.unwrap();
        dispatch(
          attachmentSet({ mediaId: media.mediaId, kind: media.kind, fileName: media.fileName, size: media.size }),
        );
      } catch {
        toast.error(MEDIA_MESSAGES.attachmentMissing);
      }
    }
    dispatch(tabSelected('send'));
    toast.info(RESULTS_MESSAGES.campaignLoaded);
    if (optedOut > 0) toast.info(RESULTS_MESSAGES.sendAgainOptedOutLeft(optedOut));
    return true;
  };
