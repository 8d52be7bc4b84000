import type { SegmentRecipient } from '@bns/contracts';
import type { AppThunk } from '../../app/store.js';
import type { RecipientColumns } from '../sender/slice.js';
import { importRecipientColumns } from '../sender/thunks.js';
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
