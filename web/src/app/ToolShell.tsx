import { useEffect, useRef, type KeyboardEvent } from 'react';
import { WEB_MESSAGES } from '@bns/contracts';
import { useGetSimulatorOutboxQuery } from '../api/api.js';
import { ActivityLog } from '../features/activity/ActivityLog.js';
import { useAuth } from '../features/auth/auth-context.js';
import { selectDisplayName } from '../features/auth/slice.js';
import { signOut } from '../features/auth/signOut.js';
import { useWebConfig } from '../features/config/publicConfig.js';
import { ConnectionBanner } from '../features/connection/ConnectionBanner.js';
import { selectIsConnected } from '../features/connection/slice.js';
import { DashboardTab } from '../features/dashboard/DashboardTab.js';
import { SendTab } from '../features/sender/SendTab.js';
import { TemplatesTab } from '../features/templates/TemplatesTab.js';
import { CampaignsTab } from '../features/campaigns/CampaignsTab.js';
import { signOutStarted } from '../features/connection/slice.js';
import { ContactsTab } from '../features/contacts/ContactsTab.js';
import { InboxBadge } from '../features/inbox/InboxBadge.js';
import { InboxTab } from '../features/inbox/InboxTab.js';
import { SettingsTab } from '../features/settings/SettingsTab.js';
import { selectActiveTab, tabSelected, type TabId } from '../features/ui/slice.js';
import { Brand } from '../components/Brand.js';
import { ErrorBoundary } from '../components/ErrorBoundary.js';
import { useAppDispatch, useAppSelector, useAppStore } from './hooks.js';

/**
 * The spec's three tabs first and as the spec has them; then what came since, each reachable without a
 * linked phone (history, keys and data do not need one; what in them does says so).
 */
const TABS: { id: TabId; label: string; beta?: boolean; needsConnection: boolean }[] = [
  { id: 'send', label: 'Send Messages', needsConnection: false },
  { id: 'dashboard', label: 'Dashboard', needsConnection: true },
  { id: 'templates', label: 'Templates', beta: true, needsConnection: true },
  { id: 'campaigns', label: 'Campaigns', needsConnection: false },
  { id: 'contacts', label: 'Contacts', needsConnection: false },
  { id: 'inbox', label: 'Inbox', needsConnection: false },
  { id: 'settings', label: 'Settings', needsConnection: false },
];

export function ToolShell() {
  const dispatch = useAppDispatch();
  const store = useAppStore();
  const auth = useAuth();
  const name = useAppSelector(selectDisplayName);
  const connected = useAppSelector(selectIsConnected);
  const active = useAppSelector(selectActiveTab);
  // Dashboard and Templates exist only while WhatsApp is connected (SPEC §6).
  const visible = TABS.filter((t) => connected || !t.needsConnection);
  const current = visible.some((t) => t.id === active) ? active : 'send';
  const simulator = useGetSimulatorOutboxQuery();
  const tabRefs = useRef<Record<string, HTMLButtonElement | null>>({});
  const { supportEmail, donationUrl } = useWebConfig();

  // On a narrow screen the tab bar scrolls: the chosen tab is brought into view.
  useEffect(() => {
    tabRefs.current[current]?.scrollIntoView?.({ block: 'nearest', inline: 'nearest' });
  }, [current]);

  const onTabKey = (e: KeyboardEvent, index: number) => {
    const delta = e.key === 'ArrowRight' ? 1 : e.key === 'ArrowLeft' ? -1 : 0;
    if (!delta) return;
    e.preventDefault();
    const next = visible[(index + delta + visible.length) % visible.length]!;
    dispatch(tabSelected(next.id));
    tabRefs.current[next.id]?.focus();
  };

  return (
    <div className="app">
      <header className="app-header">
        <div className="container header-row">
          <Brand />
          {simulator.isSuccess && (
            <span
              className="badge badge-sim"
              title="WA_ENGINE=simulated: messages go to a simulated phone, not to WhatsApp"
            >
              simulated WhatsApp
            </span>
          )}
          <div className="header-user">
            <span className="welcome" title={`Welcome, ${name}`}>
              Welcome, <strong>{name}</strong>
            </span>
            <span className="support-note">
              Need help? <a href={`mailto:${supportEmail}`}>{supportEmail}</a>
            </span>
            <button
              type="button"
              className="button secondary small"
              onClick={() => {
                // The cleanup unlinks WhatsApp on purpose: no "disconnected" warning for it.
                dispatch(signOutStarted());
                void dispatch(signOut(auth.signOut, () => store.listener.clearListeners()));
              }}
            >
              Sign Out
            </button>
          </div>
        </div>
      </header>

      <main className="container app-main">
        <ConnectionBanner />
        <div className="tabs" role="tablist" aria-label="Tool sections">
          {visible.map((t, i) => (
            <button
              key={t.id}
              ref={(el) => {
                tabRefs.current[t.id] = el;
              }}
              type="button"
              role="tab"
              id={`tab-${t.id}`}
              aria-selected={current === t.id}
              aria-controls={`panel-${t.id}`}
              tabIndex={current === t.id ? 0 : -1}
              className={`tab ${current === t.id ? 'active' : ''}`}
              onClick={() => dispatch(tabSelected(t.id))}
              onKeyDown={(e) => onTabKey(e, i)}
            >
              {t.label}
              {t.beta && <span className="badge badge-beta">Beta</span>}
              {t.id === 'inbox' && <InboxBadge />}
            </button>
          ))}
        </div>

        <section role="tabpanel" id={`panel-${current}`} aria-labelledby={`tab-${current}`} className="tab-panel">
          {current === 'send' && (
            <div className="send-layout">
              <ErrorBoundary name="send">
                <SendTab />
              </ErrorBoundary>
              <ErrorBoundary name="activity">
                <ActivityLog />
              </ErrorBoundary>
            </div>
          )}
          {current === 'dashboard' && (
            <ErrorBoundary name="dashboard">
              <DashboardTab />
            </ErrorBoundary>
          )}
          {current === 'templates' && (
            <ErrorBoundary name="templates">
              <TemplatesTab />
            </ErrorBoundary>
          )}
          {current === 'campaigns' && (
            <ErrorBoundary name="campaigns">
              <CampaignsTab />
            </ErrorBoundary>
          )}
          {current === 'contacts' && (
            <ErrorBoundary name="contacts">
              <ContactsTab />
            </ErrorBoundary>
          )}
          {current === 'inbox' && (
            <ErrorBoundary name="inbox">
              <InboxTab />
            </ErrorBoundary>
          )}
          {current === 'settings' && (
            <ErrorBoundary name="settings">
              <SettingsTab />
            </ErrorBoundary>
          )}
        </section>
      </main>

      <footer className="app-footer">
        <div className="container">
          <p>
            ♥ {WEB_MESSAGES.donationFooter}
            {/* A link only when DONATION_URL is configured: never one that leads nowhere. */}
            {donationUrl && (
              <>
                {' '}
                <a href={donationUrl} target="_blank" rel="noopener noreferrer">
                  {WEB_MESSAGES.donationLink}
                </a>
              </>
            )}
          </p>
        </div>
      </footer>
    </div>
  );
}
