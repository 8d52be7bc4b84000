import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { io } from 'socket.io-client';
import { LIMITS, MESSAGES, SESSION_MESSAGES, SESSION_SOCKET_ERROR, SOCKET } from '@bns/contracts';
import { api, devSignIn, sleep, startSystem, type System } from '@bns/testing';
import { RecordingSocket } from './socket-helpers.js';

const QR_INTERVAL_MS = 250;

describe('WhatsApp link state machine through the gateway socket', () => {
  let sys: System;
  const sockets: RecordingSocket[] = [];
  const open = async (token: string) => {
    const s = await RecordingSocket.connect(sys.gateway.url, token);
    sockets.push(s);
    return s;
  };

  beforeAll(async () => {
    sys = await startSystem({
      shards: 2,
      services: ['sessions'],
      env: { SIM_QR_INTERVAL_MS: String(QR_INTERVAL_MS), SIM_READY_DELAY_MS: '100' },
    });
  }, 120_000);

  afterAll(async () => {
    for (const s of sockets) s.close();
    await sys?.stop();
  });

  it('refuses a socket whose token is bad with connect_error "unauthorized"', async () => {
    const socket = io(sys.gateway.url, {
      path: SOCKET.path,
      transports: [...SOCKET.transports],
      auth: { token: 'not-a-token' },
      reconnection: false,
      forceNew: true,
    });
    const error = await new Promise<Error>((resolve, reject) => {
      socket.once('connect_error', resolve);
      socket.once('connect', () => reject(new Error('a bad token was let in')));
    });
    socket.close();
    expect(error.message).toBe(MESSAGES.unauthorized);
  });

  it('answers no_session, then 5 QR codes, then qr_max_attempts, and tears the link down', async () => {
    const user = await devSignIn(sys.gateway.url, 'qr-max@example.com');
    const tab = await open(user.token);
    expect(await tab.ask('connected')).toEqual({ success: true, userId: user.userId });

    tab.emit('createSession', { id: user.userId, clerkUserId: user.userId });
    await tab.waitFor('no_session');

    tab.emit('createSession', { id: user.userId, clerkUserId: user.userId, isExplicitRequest: true });
    const max = await tab.waitFor('qr_max_attempts', 1, 10_000);
    const qrs = tab.named('qr');
    expect(qrs.map((q) => q.payload.attempts)).toEqual([1, 2, 3, 4, 5]);
    expect(new Set(qrs.map((q) => q.payload.qr)).size).toBe(LIMITS.qrMaxAttempts); // each rotation is a new code
    for (const q of qrs)
      expect(q.payload.qr).toMatch(/^2@[A-Za-z0-9+/=]+,[A-Za-z0-9+/=]+,[A-Za-z0-9+/=]+,[A-Za-z0-9+/=]+$/);
    expect(max.payload).toEqual({ message: SESSION_MESSAGES.qrMaxAttempts, attempts: LIMITS.qrMaxAttempts });

    // Torn down: no further codes, nothing to scan, and the user starts from no_session again.
    await sleep(QR_INTERVAL_MS * 3);
    expect(tab.named('qr')).toHaveLength(5);
    expect((await api(sys.gateway.url, user.token).post('/dev/simulator/scan')).status).toBe(409);
    tab.emit('createSession', { id: user.userId, clerkUserId: user.userId });
    await tab.waitFor('no_session', 2);
  });

  it('links on a scan (ready with an 852 number), a second tab joins, and a reconnect answers exist', async () => {
    const user = await devSignIn(sys.gateway.url, 'linker@example.com');
    const http = api(sys.gateway.url, user.token);
    const tab1 = await open(user.token);
    const tab2 = await open(user.token);

    tab1.emit('createSession', { id: user.userId, clerkUserId: user.userId, isExplicitRequest: true });
    const firstQr = await tab1.waitFor('qr');
    expect(firstQr.payload.attempts).toBe(1);
    // Both tabs are in the user's room: the second sees the same code.
    expect((await tab2.waitFor('qr')).payload.qr).toBe(firstQr.payload.qr);

    // A second explicit request joins the link in progress: the current code again, not a new link.
    const ack = await tab2.ask('createSession', { id: user.userId, clerkUserId: user.userId, isExplicitRequest: true });
    expect(ack.state).toBe('qr');
    const scan = await http.post('/dev/simulator/scan');
    expect(scan.status).toBe(200);
    expect(scan.body.phoneNumber).toMatch(/^852\d{8}$/);

    const ready = await tab1.waitFor('ready');
    expect(ready.payload).toEqual({ id: scan.body.sessionId, phoneNumber: scan.body.phoneNumber });
    expect((await tab2.waitFor('ready')).payload).toEqual(ready.payload);
    expect(tab1.named('creating').some((c) => c.payload.message === SESSION_MESSAGES.creatingFinalizing)).toBe(true);
    // One link only: the join re-sent the code showing, it did not start a second engine with its own codes.
    const codesByAttempt = new Map<number, Set<string>>();
    for (const q of tab1.named('qr'))
      codesByAttempt.set(q.payload.attempts, (codesByAttempt.get(q.payload.attempts) ?? new Set()).add(q.payload.qr));
    for (const codes of codesByAttempt.values()) expect(codes.size).toBe(1);
    expect(tab1.named('qr').filter((q) => q.payload.attempts === 1).length).toBeGreaterThanOrEqual(2);

    // A page reload: a fresh socket asks non-explicitly and is told the link exists.
    tab1.close();
    const reloaded = await open(user.token);
    reloaded.emit('createSession', { id: user.userId, clerkUserId: user.userId });
    expect((await reloaded.waitFor('exist')).payload).toEqual(ready.payload);
  });

  it('reports disconnected when the phone unlinks, then no_session', async () => {
    const user = await devSignIn(sys.gateway.url, 'unlinker@example.com');
    const http = api(sys.gateway.url, user.token);
    const tab = await open(user.token);
    tab.emit('createSession', { id: user.userId, clerkUserId: user.userId, isExplicitRequest: true });
    await tab.waitFor('qr');
    await http.post('/dev/simulator/scan');
    await tab.waitFor('ready');

    expect((await http.post('/dev/simulator/disconnect')).status).toBe(200);
    expect((await tab.waitFor('disconnected')).payload).toEqual({ reason: 'phone_unlinked' });
    tab.emit('createSession', { id: user.userId, clerkUserId: user.userId });
    await tab.waitFor('no_session');
    expect((await http.post('/dev/simulator/disconnect')).status).toBe(409);
  });

  it("never lets a socket see another user's events, nor create a session for someone else", async () => {
    const alice = await devSignIn(sys.gateway.url, 'alice@example.com');
    const bob = await devSignIn(sys.gateway.url, 'bob@example.com');
    const aliceTab = await open(alice.token);
    const bobTab = await open(bob.token);

    bobTab.emit('createSession', { id: bob.userId, clerkUserId: bob.userId, isExplicitRequest: true });
    await bobTab.waitFor('qr');
    await api(sys.gateway.url, bob.token).post('/dev/simulator/scan');
    await bobTab.waitFor('ready');

    // Alice pretending to be Bob is refused and nothing is started for either.
    const refused = await aliceTab.ask('createSession', {
      id: bob.userId,
      clerkUserId: bob.userId,
      isExplicitRequest: true,
    });
    expect(refused).toEqual({ code: 'FORBIDDEN', message: SESSION_MESSAGES.createSessionForbidden });
    expect((await aliceTab.waitFor(SESSION_SOCKET_ERROR)).payload.message).toBe(
      SESSION_MESSAGES.createSessionForbidden,
    );

    aliceTab.emit('createSession', { id: alice.userId, clerkUserId: alice.userId });
    await aliceTab.waitFor('no_session');
    await sleep(300);
    const aliceNames = aliceTab.received.map((r) => r.name);
    expect(aliceNames).not.toContain('qr');
    expect(aliceNames).not.toContain('ready');
    expect(bobTab.named('no_session')).toHaveLength(0);
  });

  it('cleans up on sign out: 1 when linked (then no_session), 0 when there is nothing; another user is 403', async () => {
    const user = await devSignIn(sys.gateway.url, 'cleanup@example.com');
    const other = await devSignIn(sys.gateway.url, 'cleanup-other@example.com');
    const http = api(sys.gateway.url, user.token);

    const nothing = await http.post('/api/session/cleanup', { clerkUserId: user.userId });
    expect(nothing.status).toBe(200);
    expect(nothing.body).toEqual({ success: true, sessionsCleanedUp: 0, message: SESSION_MESSAGES.cleanupNothing });

    const tab = await open(user.token);
    tab.emit('createSession', { id: user.userId, clerkUserId: user.userId, isExplicitRequest: true });
    await tab.waitFor('qr');
    await http.post('/dev/simulator/scan');
    await tab.waitFor('ready');

    expect((await http.post('/api/session/cleanup', { clerkUserId: other.userId })).status).toBe(403);
    expect((await http.post('/api/session/cleanup', {})).status).toBe(400);

    const done = await http.post('/api/session/cleanup', { clerkUserId: user.userId });
    expect(done.body).toEqual({ success: true, sessionsCleanedUp: 1, message: SESSION_MESSAGES.cleanupDone });
    expect((await tab.waitFor('disconnected')).payload).toEqual({ reason: 'logout' });
    tab.emit('createSession', { id: user.userId, clerkUserId: user.userId });
    await tab.waitFor('no_session');
    expect((await http.post('/api/session/cleanup', { clerkUserId: user.userId })).body.sessionsCleanedUp).toBe(0);
  });

  it('answers 404 on the dev simulator calls unless WA_ENGINE=simulated', async () => {
    const user = await devSignIn(sys.gateway.url, 'dev-calls@example.com');
    expect((await api(sys.gateway.url, user.token).get('/dev/simulator/outbox')).body).toEqual({
      success: true,
      messages: [],
    });
    const prodGateway = await sys.start('gateway', { WA_ENGINE: 'webjs' }, 'gateway-webjs');
    try {
      const prodUser = await devSignIn(prodGateway.url, 'dev-calls@example.com');
      const prodApi = api(prodGateway.url, prodUser.token);
      expect((await prodApi.post('/dev/simulator/scan')).status).toBe(404);
      expect((await prodApi.post('/dev/simulator/disconnect')).status).toBe(404);
      expect((await prodApi.get('/dev/simulator/outbox')).status).toBe(404);
    } finally {
      await prodGateway.stop();
    }
  });
});
