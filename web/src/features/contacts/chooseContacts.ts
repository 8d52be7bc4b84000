import {
  CONTACT_MESSAGES,
  CONTACTS_LIMITS,
  FOLLOW_UPS,
  type FollowUpKind,
  type SegmentRecipient,
} from '@bns/contracts';
import type { AppThunk } from '../../app/store.js';
import { templateLoaded, type RecipientColumns } from '../sender/slice.js';
import { importRecipientColumns } from '../sender/thunks.js';
import { toast } from '../toasts/toasts.js';
import { tabSelected } from '../ui/slice.js';
import { contactsApi } from './contactsApi.js';

/** Recipients with variables as the sender's columns (a missing variable is a blank cell). */
export function columnsOf(recipients: readonly SegmentRecipient[]): RecipientColumns {
  const names = [...new Set(recipients.flatMap((r) => Object.keys(r.variables)))];
  return {
    phones: recipients.map((r) => r.phone),
    rows: recipients.map(() => 0),
    names,
    values: names.map((name) => recipients.map((r) => r.variables[name] ?? '')),
  };
}

/**
 * "Choose contacts": every contact a saved segment selects now, a page at a time, joins the sender
 * with its name and fields as `{{variables}}` (the same merge as a file's rows). Answers how many.
 */
export const addSegmentRecipients =
  (segmentId: string): AppThunk<Promise<number>> =>
  async (dispatch) => {
    const all: SegmentRecipient[] = [];
    let cursor: string | undefined;
    let asOf: string | undefined;
    do {
      const request = dispatch(contactsApi.endpoints.segmentMembers.initiate({ segmentId, cursor, asOf }));
      try {
        const page = await request.unwrap();
        for (const r of page.recipients) all.push(r);
        asOf = page.asOf;
        cursor = page.nextCursor ?? undefined;
      } finally {
        request.unsubscribe();
      }
    } while (cursor);
    await dispatch(importRecipientColumns(columnsOf(all)));
    return all.length;
  };

/**
 * "Follow up" from a finished campaign's report: the contacts it did not reach as hoped (not read, or
 * failed) or that answered (read, replied) become a saved segment ("Follow-up: …", reused when it
 * exists), and its contacts the sender's recipients, with an empty message for the follow-up.
 */
export const followUp =
  (job: { jobId: string; messagePreview: string; createdAt: string }, kind: FollowUpKind): AppThunk<Promise<number>> =>
  async (dispatch) => {
    const f = FOLLOW_UPS[kind];
    const day = new Date(job.createdAt).toLocaleDateString('en-CA');
    const name = `Follow-up (${f.label.toLowerCase()}): ${day} ${job.messagePreview}`
      .slice(0, CONTACTS_LIMITS.segmentNameMax)
      .trim();
    const list = dispatch(contactsApi.endpoints.getSegments.initiate(undefined, { forceRefetch: true }));
    let segmentId: string;
    try {
      const existing = (await list.unwrap()).find((s) => s.name === name);
      segmentId =
        existing?.id ??
        (
          await dispatch(
            contactsApi.endpoints.createSegment.initiate({ name, rule: { facts: f.facts(job.jobId) } }),
          ).unwrap()
        ).id;
    } finally {
      list.unsubscribe();
    }
    dispatch(templateLoaded({ message: '', phoneNumbers: [] }));
    const added = await dispatch(addSegmentRecipients(segmentId));
    if (added === 0) {
      toast.info(CONTACT_MESSAGES.followUpEmpty(f.who));
      return 0;
    }
    dispatch(tabSelected('send'));
    toast.info(CONTACT_MESSAGES.followUpLoaded(added, f.who));
    return added;
  };
