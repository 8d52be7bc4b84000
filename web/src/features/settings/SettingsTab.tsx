import { useRef, type KeyboardEvent } from 'react';
import { useAppDispatch, useAppSelector } from '../../app/hooks.js';
import { ErrorBoundary } from '../../components/ErrorBoundary.js';
import { ApiWebhooksTab } from '../integrations/ApiWebhooksTab.js';
import { OptOutsCard } from '../optouts/OptOutsCard.js';
import { SendingPaceCard } from '../pacing/SendingPaceCard.js';
import { selectSettingsSection, settingsSectionSelected, type SettingsSection } from '../ui/slice.js';
import { AccountDataSection } from './AccountDataSection.js';

const SECTIONS: { id: SettingsSection; label: string }[] = [
  { id: 'pace', label: 'Sending pace' },
  { id: 'optouts', label: 'Opt-outs' },
  { id: 'api', label: 'API & Webhooks' },
  { id: 'account', label: 'Account & data' },
];

/**
 * Settings: what shapes every send and the account, one section at a time (a list of sections that grows
 * without making one long page). None of it needs a linked phone.
 */
export function SettingsTab() {
  const dispatch = useAppDispatch();
  const current = useAppSelector(selectSettingsSection);
  const refs = useRef<Record<string, HTMLButtonElement | null>>({});
  const onKey = (e: KeyboardEvent, index: number) => {
    const delta =
      e.key === 'ArrowDown' || e.key === 'ArrowRight' ? 1 : e.key === 'ArrowUp' || e.key === 'ArrowLeft' ? -1 : 0;
    if (!delta) return;
    e.preventDefault();
    const next = SECTIONS[(index + delta + SECTIONS.length) % SECTIONS.length]!;
    dispatch(settingsSectionSelected(next.id));
    refs.current[next.id]?.focus();
  };
  return (
    <div className="settings-layout">
      <div className="settings-nav" role="tablist" aria-label="Settings sections" aria-orientation="vertical">
        {SECTIONS.map((s, i) => (
          <button
            key={s.id}
            ref={(el) => {
              refs.current[s.id] = el;
            }}
            type="button"
            role="tab"
            id={`settings-tab-${s.id}`}
            aria-selected={current === s.id}
            aria-controls={`settings-panel-${s.id}`}
            tabIndex={current === s.id ? 0 : -1}
            className={`settings-nav-item ${current === s.id ? 'active' : ''}`}
            onClick={() => dispatch(settingsSectionSelected(s.id))}
            onKeyDown={(e) => onKey(e, i)}
          >
            {s.label}
          </button>
        ))}
      </div>
      <div
        role="tabpanel"
        id={`settings-panel-${current}`}
        aria-labelledby={`settings-tab-${current}`}
        className="settings-panel"
      >
        <ErrorBoundary name={`settings-${current}`}>
          {current === 'pace' && <SendingPaceCard />}
          {current === 'optouts' && <OptOutsCard />}
          {current === 'api' && <ApiWebhooksTab />}
          {current === 'account' && <AccountDataSection />}
        </ErrorBoundary>
      </div>
    </div>
  );
}
