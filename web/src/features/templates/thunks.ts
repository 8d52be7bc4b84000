import { MESSAGES, normalizeHkPhone, type Template } from '@bns/contracts';
import { api } from '../../api/api.js';
import type { AppThunk } from '../../app/store.js';
import { startSending } from '../job/thunks.js';
import { templateLoaded } from '../sender/slice.js';
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
 * Use: needs a message and numbers (SPEC §5 "Template send errors"); loads both into the sender.
 * Returns the numbers to confirm, or null when the template cannot be sent.
 */
export const loadTemplate =
  (template: Template): AppThunk<string[] | null> =>
  (dispatch) => {
    if (template.message_content.trim() === '') {
      toast.error(MESSAGES.templateMessageEmpty);
      return null;
    }
    const numbers = sendableNumbers(template);
    if (numbers.length === 0) {
      toast.error(MESSAGES.noPhoneNumbersInTemplate);
      return null;
    }
    dispatch(templateLoaded({ message: template.message_content, phoneNumbers: numbers }));
    return numbers;
  };

/** After the send confirm: count the use (a failure is only a console warning), then send from Tab 1. */
export const sendTemplate =
  (template: Template): AppThunk =>
  async (dispatch, getState) => {
    const userId = getState().session.userId;
    try {
      await dispatch(api.endpoints.useTemplate.initiate({ userId, id: template.id })).unwrap();
    } catch (e) {
      console.warn('Template usage was not counted', e);
    }
    try {
      dispatch(tabSelected('send'));
      await dispatch(startSending());
    } catch {
      toast.error(MESSAGES.errorUsingTemplate);
    }
  };
