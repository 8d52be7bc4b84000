import { SETTINGS_MESSAGES } from '@bns/contracts';
import { useAppSelector } from '../../app/hooks.js';
import { selectIsConnected } from '../connection/slice.js';
import { CampaignsCard } from './CampaignsCard.js';

/** Campaigns: every job, its report and Send again; history needs no phone, sending again does. */
export function CampaignsTab() {
  const linked = useAppSelector(selectIsConnected);
  return (
    <div className="campaigns-tab">
      {!linked && <p className="notice notice-info">{SETTINGS_MESSAGES.campaignsNeedLink}</p>}
      <CampaignsCard />
    </div>
  );
}
