import { useEffect, useState } from 'react';
import { WEB_MESSAGES } from '@bns/contracts';
import { useAppSelector } from '../../app/hooks.js';
import { selectConnection } from './slice.js';
import './connection.css';

/** How long "Connection restored" stays before the banner says "Live" again. */
export const RESTORED_SHOWN_MS = 5_000;

const clock = (ms: number) => new Date(ms).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' });

export type BannerState = 'connecting' | 'live' | 'reconnecting' | 'offline' | 'restored';

/** What is true about the link to the server, in one word. */
export function bannerStateOf(
  c: { socket: string; offlineSince?: number | null; restoredAt?: number | null; browserOffline?: boolean },
  now: number,
): BannerState {
  if (c.browserOffline || c.socket === 'failed') return 'offline';
  if (c.socket === 'reconnecting') return 'reconnecting';
  if (c.socket !== 'connected') return 'connecting';
  if (c.restoredAt != null && now - c.restoredAt < RESTORED_SHOWN_MS) return 'restored';
  return 'live';
}

/**
 * The one connection banner: live, reconnecting, offline since hh:mm, or restored. Counters and
 * countdowns elsewhere are hidden while it says the server cannot be reached.
 */
export function ConnectionBanner() {
  const c = useAppSelector(selectConnection);
  const [now, setNow] = useState(() => Date.now());
  // A restore is news for a few seconds; then the banner is "Live" again.
  useEffect(() => {
    setNow(Date.now());
    if (c.restoredAt == null) return;
    const left = c.restoredAt + RESTORED_SHOWN_MS - Date.now();
    if (left <= 0) return;
    const timer = setTimeout(() => setNow(Date.now()), left + 50);
    return () => clearTimeout(timer);
  }, [c.restoredAt, c.socket, c.browserOffline]);
  const state = bannerStateOf(c, now);
  const text =
    state === 'offline'
      ? WEB_MESSAGES.connectionOffline(clock(c.offlineSince ?? now))
      : state === 'reconnecting'
        ? WEB_MESSAGES.connectionReconnecting
        : state === 'restored'
          ? WEB_MESSAGES.connectionRestoredBanner
          : state === 'connecting'
            ? WEB_MESSAGES.connectionConnecting
            : WEB_MESSAGES.connectionLive;
  return (
    <div className={`conn-banner conn-${state}`} role="status" data-testid="connection-banner" data-state={state}>
      <span className="conn-dot" aria-hidden="true" />
      {text}
    </div>
  );
}
