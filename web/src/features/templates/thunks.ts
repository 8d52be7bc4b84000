import { MEDIA_MESSAGES, MESSAGES, normalizeHkPhone, WEB_MESSAGES, type Template } from '@bns/contracts';
import type { AppThunk } from '../../app/store.js';
import { isTerminal, jobReset } from '../job/slice.js';
import { startSending } from '../job/thunks.js';
import { api } from '../../api/api.js';
import { templateLoaded, type Attachment } from '../sender/slice.js';
import { toast } from '../toasts/toasts.js';
import { tabSelected } from '../ui/slice.js';

/** The template's numbers the send screen accepts (8 Hong Kong digits), duplicates merged. */
export function sendableNumbers(template: Pick<Template, 'phone_numbers'>): string[] {
  const out: string[] = [];
  for (const raw of template.phone_numbers) {
    const phone = normalizeHkPhone(raw);
    if (phone && !out.includes(phone)) out.push(phone);
  }
  return out;
}

/**
 * Use: needs a message and numbers (SPEC §5 "Template send errors"). Nothing is loaded yet: the send
 * confirm shows the template, and only Send Messages (or Open in Send Messages) puts it into the sender,
 * so Cancel leaves the sender exactly as it was. While a job is in progress Use does nothing (the button
 * is disabled with the reason). Returns the numbers to confirm, or null when the template cannot be sent.
 */
export const checkTemplate =
  (template: Template): AppThunk<string[] | null> =>
  (_dispatch, getState) => {
    if (template.message_content.trim() === '') {
      toast.error(MESSAGES.templateMessageEmpty);
      return null;
    }
    const numbers = sendableNumbers(template);
    if (numbers.length === 0) {
      toast.error(MESSAGES.noPhoneNumbersInTemplate);
      return null;
    }
    const { job } = getState();
    if (job.phase === 'starting' || (job.phase === 'progress' && !isTerminal(job.status))) {
      toast.error(WEB_MESSAGES.useWhileSending);
      return null;
    }
    return numbers;
  };

/**
 * The template's message and numbers replace the send. A finished job still on screen is put away first
 * (as Go Back would), so the send that follows is a new one.
 */
export const loadTemplate =
  (template: Template, numbers: readonly string[]): AppThunk<Promise<boolean>> =>
  async (dispatch, getState) => {
    if (getState().job.phase === 'progress') dispatch(jobReset());
    // The template's attachment comes along (its kind, name and size read again: the jobs service owns them).
    let attachment: Attachment | null = null;
    let missing = false;
    if (template.mediaId) {
      const read = dispatch(api.endpoints.getMedia.initiate(template.mediaId, { subscribe: false }));
      try {
        const media = await read.unwrap();
        attachment = { mediaId: media.mediaId, kind: media.kind, fileName: media.fileName, size: media.size };
      } catch {
        missing = true;
      }
    }
    dispatch(
      templateLoaded({ message: template.message_content, phoneNumbers: numbers, templateId: template.id, attachment }),
    );
    if (missing) toast.error(MEDIA_MESSAGES.attachmentMissing);
    return !missing;
  };

/**
 * After the send confirm: load the template and send from Tab 1. The use is counted by the send itself
 * once the job is accepted (startSending), so a send refused now and started later from Step 1 still
 * counts once.
 */
export const sendTemplate =
  (template: Template, numbers: readonly string[]): AppThunk =>
  async (dispatch) => {
    const loaded = await dispatch(loadTemplate(template, numbers));
    dispatch(tabSelected('send'));
    // Without its attachment the template is not what the user confirmed: the sender shows why.
    if (!loaded) return;
    try {
      await dispatch(startSending());
    } catch {
      toast.error(MESSAGES.errorUsingTemplate);
    }
  };
