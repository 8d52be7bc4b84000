import { act, screen } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { WEB_MESSAGES } from '@bns/contracts';
import { connectedState, renderWithProviders } from '../../../test/renderWithProviders.js';
import { bannerStateOf, ConnectionBanner, RESTORED_SHOWN_MS } from '../ConnectionBanner.js';
import { connectionSlice, initialConnectionState, networkChanged, socketStatusChanged } from '../slice.js';

describe('the connection banner', () => {
  it('goes live → offline since hh:mm → reconnecting → restored → live, from the socket and the network', () => {
    const { store } = renderWithProviders(<ConnectionBanner />, { preloadedState: connectedState() });
    const banner = () => screen.getByTestId('connection-banner');
    expect(banner().dataset.state).toBe('live');
    expect(banner().textContent).toContain(WEB_MESSAGES.connectionLive);

    act(() => {
      store.dispatch(networkChanged(false));
    });
    expect(banner().dataset.state).toBe('offline');
    expect(banner().textContent).toMatch(/^Offline since \d{1,2}:\d{2}/);

    act(() => {
      store.dispatch(socketStatusChanged('reconnecting'));
      store.dispatch(networkChanged(true));
    });
    expect(banner().dataset.state).toBe('reconnecting');

    act(() => {
      store.dispatch(socketStatusChanged('connected'));
    });
    expect(banner().dataset.state).toBe('restored');
    expect(banner().textContent).toContain(WEB_MESSAGES.connectionRestoredBanner);
    expect(store.getState().connection.offlineSince).toBeNull();
  });

  it('restored lasts a few seconds, then live; a socket that gave up is offline', () => {
    const now = 1_000_000;
    const base = { ...initialConnectionState, socket: 'connected' as const };
    expect(bannerStateOf({ ...base, restoredAt: now - 1000 }, now)).toBe('restored');
    expect(bannerStateOf({ ...base, restoredAt: now - RESTORED_SHOWN_MS - 1 }, now)).toBe('live');
    expect(bannerStateOf({ ...base, socket: 'failed' }, now)).toBe('offline');
    expect(bannerStateOf({ ...base, socket: 'idle' }, now)).toBe('connecting');
  });

  it('keeps the time the server was first lost, across retries', () => {
    const r = connectionSlice.reducer;
    let s = r({ ...initialConnectionState, socket: 'connected' }, socketStatusChanged('reconnecting'));
    const since = s.offlineSince;
    expect(since).toEqual(expect.any(Number));
    s = r(s, socketStatusChanged('reconnecting'));
    s = r(s, socketStatusChanged('failed'));
    expect(s.offlineSince).toBe(since);
    s = r(s, socketStatusChanged('idle'));
    expect(s.offlineSince).toBeNull();
  });
});
