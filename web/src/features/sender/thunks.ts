import type { AppThunk } from '../../app/store.js';
import { mergeColumnsInSlices, recipientsMerged, type RecipientColumns } from './slice.js';

/**
 * A file's recipients join the sender: merged a slice at a time with the page free in between, then
 * handed to the store in one step, so 200,000 recipients never hold the page's main thread for long.
 */
export const importRecipientColumns =
  (columns: RecipientColumns): AppThunk =>
  async (dispatch, getState) => {
    dispatch(recipientsMerged(await mergeColumnsInSlices(getState().sender, columns)));
  };
