import { useId, useState } from 'react';
import { LIMITS, MESSAGES, WEB_MESSAGES } from '@bns/contracts';
import { useGetDashboardQuery, useSetPreferencesMutation } from '../../api/api.js';
import { errorMessage } from '../../api/errors.js';
import type { DashboardMessage } from '../../api/types.js';
import { useAppSelector } from '../../app/hooks.js';
import { Spinner } from '../../components/Spinner.js';
import { selectUserId } from '../auth/slice.js';
import { toast } from '../toasts/toasts.js';
import { UsageChart } from './UsageChart.js';

function MessageRow({ m }: { m: DashboardMessage }) {
  const [expanded, setExpanded] = useState(false);
  const long = m.content.length > LIMITS.dashboardContentPreview;
  const text = long && !expanded ? `${m.content.slice(0, LIMITS.dashboardContentPreview)}…` : m.content;
  return (
    <li className="message-row">
      <div className="message-row-head">
        <span className="phone">{m.recipient}</span>
        <span className={`status-pill status-${m.status}`}>{m.status}</span>
        <time dateTime={m.sent_at ?? m.created_at} className="muted small">
          {new Date(m.sent_at ?? m.created_at).toLocaleString()}
        </time>
      </div>
      <p className="message-content">{text}</p>
      {m.error && <p className="muted small">{m.error}</p>}
      {long && (
        <button
          type="button"
          className="button link small"
          aria-expanded={expanded}
          onClick={() => setExpanded(!expanded)}
        >
          {expanded ? 'Show less' : 'Show more'}
        </button>
      )}
    </li>
  );
}

/** Tab 2: stats, 12 months of usage, the 10 most recent messages and the Settings card. */
export function DashboardTab() {
  const userId = useAppSelector(selectUserId);
  const { data, error, isLoading, isFetching, refetch } = useGetDashboardQuery(userId, {
    refetchOnMountOrArgChange: true,
  });
  const [setPreferences] = useSetPreferencesMutation();
  const toggleId = useId();

  if (isLoading)
    return (
      <div className="card">
        <Spinner label="Loading dashboard…" />
      </div>
    );
  if (error || !data)
    return (
      <div className="card error-card" role="alert">
        <h2>{MESSAGES.errorLoadingDashboard}</h2>
        <p>{errorMessage(error)}</p>
        <button type="button" className="button primary" onClick={() => void refetch()}>
          {MESSAGES.tryAgain}
        </button>
      </div>
    );

  const enabled = data.user.preferences.auto_login_message_enabled;
  const stats = [
    { label: 'Total Messages', value: data.stats.totalMessages },
    { label: 'Successful', value: data.stats.successfulMessages, tone: 'success' },
    { label: 'Failed', value: data.stats.failedMessages, tone: 'failed' },
    // Not sent on purpose (opted out, not on WhatsApp); an older server may not say.
    { label: 'Skipped', value: data.stats.skippedMessages ?? 0, tone: 'skipped' },
    { label: 'Active Sessions', value: data.stats.activeSessions },
  ];

  return (
    <div className="dashboard">
      <div className="stats-grid">
        {stats.map((s) => (
          <div key={s.label} className={`stat-card ${s.tone ?? ''}`}>
            <span className="stat-value">{s.value}</span>
            <span className="stat-label">{s.label}</span>
          </div>
        ))}
      </div>

      <section className="card" aria-labelledby="usage-title">
        <div className="card-title-row">
          <h2 id="usage-title">Monthly usage</h2>
          <span className="muted small">
            This month: {data.usage.messages_sent_count} sent, {data.usage.messages_failed_count} failed,{' '}
            {data.usage.messages_skipped_count ?? 0} skipped
          </span>
        </div>
        <UsageChart monthly={data.usage.monthly} />
      </section>

      <div className="dashboard-grid">
        <section className="card" aria-labelledby="recent-title">
          <div className="card-title-row">
            <h2 id="recent-title">Recent messages</h2>
            <button type="button" className="button link small" onClick={() => void refetch()} disabled={isFetching}>
              {isFetching ? 'Refreshing…' : 'Refresh'}
            </button>
          </div>
          {data.messages.length === 0 ? (
            <p className="muted">No messages yet.</p>
          ) : (
            <ol className="message-list">
              {data.messages.slice(0, LIMITS.dashboardRecentMessages).map((m) => (
                <MessageRow key={m.id} m={m} />
              ))}
            </ol>
          )}
        </section>

        <div className="dashboard-side">
          <section className="card settings-card" aria-labelledby="settings-title">
            <h2 id="settings-title">Settings</h2>
            <div className="toggle-row">
              <div>
                <label htmlFor={toggleId}>
                  <strong>Auto-Login Success Message</strong>
                </label>
                <p className="muted small">Send yourself a short WhatsApp message when your account is linked.</p>
              </div>
              <button
                id={toggleId}
                type="button"
                role="switch"
                aria-checked={enabled}
                className={`switch ${enabled ? 'on' : ''}`}
                onClick={() =>
                  void setPreferences({ userId, preferences: { auto_login_message_enabled: !enabled } })
                    .unwrap()
                    .then(
                      () => toast.success(WEB_MESSAGES.preferencesSaved),
                      () => toast.error(WEB_MESSAGES.preferencesFailed),
                    )
                }
              >
                <span className="switch-knob" aria-hidden="true" />
                <span className="switch-label">{enabled ? 'Enabled' : 'Disabled'}</span>
              </button>
            </div>
          </section>
        </div>
      </div>
    </div>
  );
}
