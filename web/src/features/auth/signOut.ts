import { WEB_MESSAGES } from '@bns/contracts';
import { api } from '../../api/api.js';
import type { CleanupAnswer } from '../../api/types.js';
import { localStateCleared, type AppThunk } from '../../app/store.js';
import { socketDisconnect } from '../connection/socketMiddleware.js';
import { toast } from '../toasts/toasts.js';

/**
 * SPEC §4.6: ask the server to clean the WhatsApp session up, then clear local state and stop every
 * timer, and sign out whatever the cleanup answered (a warning on partial failure, an error on failure).
 */
export const signOut =
  (authSignOut: () => Promise<void>, stopTimers: () => void): AppThunk =>
  async (dispatch, getState) => {
    const { userId } = getState().session;
    try {
      await dispatch(api.endpoints.cleanupSession.initiate(userId)).unwrap();
    } catch (e) {
      // A partial cleanup is a 200 of {success: false, partial: true, error}: say what is left over.
      const answer = (e as { status?: unknown; data?: CleanupAnswer }).data;
      if (
        (e as { status?: unknown }).status === 'CUSTOM_ERROR' &&
        answer !== undefined &&
        'partial' in answer &&
        answer.partial
      ) {
        toast.warning(answer.error ? `${WEB_MESSAGES.cleanupPartial} ${answer.error}` : WEB_MESSAGES.cleanupPartial);
      } else {
        toast.error(WEB_MESSAGES.cleanupFailed);
      }
    }
    dispatch(socketDisconnect());
    stopTimers();
    dispatch(api.util.resetApiState());
    dispatch(localStateCleared());
    await authSignOut();
  };
