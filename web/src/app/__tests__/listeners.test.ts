import { afterEach, describe, expect, it, vi } from 'vitest';
import { LIMITS, WEB_MESSAGES } from '@bns/contracts';
import { checkStarted, connectRequested, sessionReady } from '../../features/connection/slice.js';
import type { Socket } from 'socket.io-client';
import { socketConnect } from '../../features/connection/socketMiddleware.js';
import { makeStore } from '../store.js';
import { TEST_USER } from '../../test/renderWithProviders.js';

afterEach(() => vi.useRealTimers());

describe('connection timers', () => {
  it('a session check with no answer gives up after 30 s and shows the Connect button', async () => {
    vi.useFakeTimers();
    const store = makeStore({ session: TEST_USER });
    store.dispatch(checkStarted());
    await vi.advanceTimersByTimeAsync(LIMITS.sessionCheckTimeoutMs - 1);
    expect(store.getState().connection.status).toBe('checking');
    await vi.advanceTimersByTimeAsync(1);
    expect(store.getState().connection.status).toBe('no_session');
    expect(store.getState().activity.entries[0]!.message).toBe(WEB_MESSAGES.sessionCheckTimedOut);
    store.listener.clearListeners();
  });

  it('checking starts on load: a socket that never connects still ends in the Connect button after 30 s', async () => {
    vi.useFakeTimers();
    // A socket stand-in that never connects (as when the network blocks socket.io).
    const silent = {
      on: () => silent,
      io: { on: () => undefined, removeAllListeners: () => undefined },
      removeAllListeners: () => undefined,
      disconnect: () => undefined,
      emit: () => undefined,
    };
    const store = makeStore({ session: TEST_USER, socketFactory: () => silent as unknown as Socket });
    store.dispatch(socketConnect());
    expect(store.getState().connection.status).toBe('checking');
    await vi.advanceTimersByTimeAsync(LIMITS.sessionCheckTimeoutMs - 1);
    expect(store.getState().connection.status).toBe('checking');
    await vi.advanceTimersByTimeAsync(1);
    expect(store.getState().connection.status).toBe('no_session');
    store.listener.clearListeners();
  });

  it('a socket connecting late does not restart the 30 s check', async () => {
    vi.useFakeTimers();
    const store = makeStore({ session: TEST_USER });
    store.dispatch(checkStarted());
    await vi.advanceTimersByTimeAsync(20_000);
    store.dispatch(checkStarted()); // what the socket's 'connect' dispatches
    await vi.advanceTimersByTimeAsync(LIMITS.sessionCheckTimeoutMs - 20_000);
    expect(store.getState().connection.status).toBe('no_session');
    store.listener.clearListeners();
  });

  it('connecting gives up after 30 s unless a QR or ready arrives', async () => {
    vi.useFakeTimers();
    const store = makeStore({ session: TEST_USER });
    store.dispatch(connectRequested());
    await vi.advanceTimersByTimeAsync(LIMITS.connectTimeoutMs);
    expect(store.getState().connection.status).toBe('no_session');

    store.dispatch(connectRequested());
    store.dispatch(sessionReady({ id: 's', phoneNumber: '85291234567' }));
    await vi.advanceTimersByTimeAsync(LIMITS.connectTimeoutMs);
    expect(store.getState().connection.status).toBe('connected');
    store.listener.clearListeners();
  });

  it('writes a keep-alive entry every 10 minutes while connected, and stops when the tool closes', async () => {
    vi.useFakeTimers();
    const store = makeStore({ session: TEST_USER });
    store.dispatch(sessionReady({ id: 's', phoneNumber: '85291234567' }));
    await vi.advanceTimersByTimeAsync(LIMITS.keepAliveLogMs * 2);
    const keepAlives = () =>
      store.getState().activity.entries.filter((e) => e.message === WEB_MESSAGES.keepAlive).length;
    expect(keepAlives()).toBe(2);
    store.listener.clearListeners();
    await vi.advanceTimersByTimeAsync(LIMITS.keepAliveLogMs * 3);
    expect(keepAlives()).toBe(2);
  });
});

describe('job end', () => {
  it('is logged and announced once when the socket reports it, and a later status does not repeat it', async () => {
    const { jobProgressEvent, jobStatusReceived, initialJobState } = await import('../../features/job/slice.js');
    const store = makeStore({
      session: TEST_USER,
      preloadedState: {
        job: { ...initialJobState, phase: 'progress', jobId: 'j1', status: 'running', monitoring: true },
      },
    });
    store.dispatch(jobProgressEvent({ jobId: 'j1', status: 'completed', progress: { total: 3, sent: 2, failed: 1 } }));
    store.dispatch(
      jobStatusReceived({
        jobId: 'j1',
        status: 'completed',
        progress: { total: 3, sent: 2, failed: 1 },
        results: { successList: [], failedList: [] },
        error: null,
        estimatedTime: 1,
        nextSendAt: null,
        createdAt: '2025-01-01T00:00:00Z',
        startedAt: null,
        finishedAt: null,
      }),
    );
    const lines = store.getState().activity.entries.filter((e) => e.message === 'Job completed: 2 sent, 1 failed');
    expect(lines).toHaveLength(1);
    expect(store.getState().job.donationPromptOpen).toBe(true);
    store.listener.clearListeners();
  });
});
