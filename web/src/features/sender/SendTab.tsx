import { WEB_MESSAGES } from '@bns/contracts';
import { useAppDispatch, useAppSelector } from '../../app/hooks.js';
import { Dialog } from '../../components/Dialog.js';
import { useWebConfig } from '../config/publicConfig.js';
import { ConnectionPanel } from '../connection/ConnectionPanel.js';
import { selectIsConnected } from '../connection/slice.js';
import { StepProgress } from '../job/StepProgress.js';
import { donationPromptClosed, selectJob } from '../job/slice.js';
import { StepCompose } from './StepCompose.js';
import { StepReview } from './StepReview.js';

/** Tab 1: the connection, then the setup (Steps 1 and 2) or, once a job started, its progress (Step 3). */
export function SendTab() {
  const dispatch = useAppDispatch();
  const connected = useAppSelector(selectIsConnected);
  const job = useAppSelector(selectJob);
  const inJob = job.phase !== 'setup';
  const { donationUrl } = useWebConfig();

  return (
    <div className="send-main">
      <ConnectionPanel />
      {inJob ? (
        <StepProgress />
      ) : (
        connected && (
          <>
            <StepCompose />
            <StepReview />
          </>
        )
      )}
      {job.donationPromptOpen && (
        <Dialog
          title="Your messages are on their way"
          size="small"
          onClose={() => dispatch(donationPromptClosed())}
          footer={
            <>
              <button type="button" className="button secondary" onClick={() => dispatch(donationPromptClosed())}>
                Maybe later
              </button>
              {donationUrl && (
                <a
                  className="button primary"
                  href={donationUrl}
                  target="_blank"
                  rel="noopener noreferrer"
                  onClick={() => dispatch(donationPromptClosed())}
                >
                  {WEB_MESSAGES.donationLink}
                </a>
              )}
            </>
          }
        >
          <p>{WEB_MESSAGES.donationPrompt}</p>
        </Dialog>
      )}
    </div>
  );
}
