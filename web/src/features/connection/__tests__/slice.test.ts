import { describe, expect, it } from 'vitest';
import {
  checkStarted,
  checkTimedOut,
  connectionSlice,
  connectRequested,
  connectTimedOut,
  initialConnectionState,
  noSession,
  qrMaxAttempts,
  qrReceived,
  sessionCreating,
  sessionDisconnected,
  sessionReady,
  type ConnectionState,
} from '../slice.js';
import { uiSlice, tabSelected } from '../../ui/slice.js';

const run = (...actions: Parameters<typeof connectionSlice.reducer>[1][]): ConnectionState =>
  actions.reduce((s, a) => connectionSlice.reducer(s, a), initialConnectionState);

describe('connection slice (SPEC §4 WhatsApp connection)', () => {
  it('unknown → checking → no_session shows the manual Connect button', () => {
    expect(run(checkStarted()).status).toBe('checking');
    expect(run(checkStarted(), noSession()).status).toBe('no_session');
  });

  it('checking times out to no_session; an answered check does not', () => {
    expect(run(checkStarted(), checkTimedOut()).status).toBe('no_session');
    expect(run(checkStarted(), sessionReady({ id: 's', phoneNumber: '85291234567' }), checkTimedOut()).status).toBe(
      'connected',
    );
  });

  it('connect → qr with attempts → ready', () => {
    const s = run(
      checkStarted(),
      noSession(),
      connectRequested(),
      qrReceived({ qr: 'QR1', attempts: 1 }),
      qrReceived({ qr: 'QR2', attempts: 2 }),
    );
    expect(s).toMatchObject({ status: 'qr', qr: 'QR2', attempts: 2 });
    expect(connectionSlice.reducer(s, sessionReady({ id: 's1', phoneNumber: '85291234567' }))).toMatchObject({
      status: 'connected',
      phoneNumber: '85291234567',
      qr: null,
    });
  });

  it('the 5th QR without a scan → max attempts with the message, the QR kept (shown blurred)', () => {
    const s = run(
      connectRequested(),
      qrReceived({ qr: 'QR5', attempts: 5 }),
      qrMaxAttempts({ message: 'Maximum QR attempts reached', attempts: 5 }),
    );
    expect(s).toMatchObject({
      status: 'max_attempts',
      qr: 'QR5',
      maxAttemptsMessage: 'Maximum QR attempts reached',
      attempts: 5,
    });
  });

  it('connecting times out back to the Connect button', () => {
    expect(run(connectRequested(), connectTimedOut()).status).toBe('no_session');
    expect(run(connectRequested(), qrReceived({ qr: 'Q', attempts: 1 }), connectTimedOut()).status).toBe('qr');
  });

  it('exist (found at check) counts as connected; creating shows while a link is being made', () => {
    expect(run(checkStarted(), sessionCreating({ message: 'Session is being created' })).status).toBe('creating');
    expect(
      run(checkStarted(), sessionCreating({ message: null }), sessionReady({ id: 's', phoneNumber: '85261234567' }))
        .status,
    ).toBe('connected');
  });

  it('another tab checking (no_session / creating) does not disturb our QR flow', () => {
    const qr = run(connectRequested(), qrReceived({ qr: 'Q', attempts: 1 }));
    expect(connectionSlice.reducer(qr, noSession()).status).toBe('qr');
    expect(connectionSlice.reducer(qr, sessionCreating({ message: null })).status).toBe('qr');
  });

  it('a lost link clears the number and returns the user to Send Messages', () => {
    const connected = run(sessionReady({ id: 's', phoneNumber: '85291234567' }));
    const lost = connectionSlice.reducer(connected, sessionDisconnected());
    expect(lost).toMatchObject({ status: 'no_session', phoneNumber: null });
    const onTemplates = uiSlice.reducer(undefined, tabSelected('templates'));
    expect(uiSlice.reducer(onTemplates, sessionDisconnected()).activeTab).toBe('send');
  });
});
