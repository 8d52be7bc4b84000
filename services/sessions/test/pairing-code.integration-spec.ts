import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { LIMITS, SESSION_MESSAGES, SessionsErrorCode } from '@bns/contracts';
import { api, devSignIn, sleep, startSystem, type System } from '@bns/testing';
import { RecordingSocket } from './socket-helpers.js';
import { waitForValue } from './wait.js';

const REFRESH_MS = 600;

describe('linking by phone number (pairing code) through the gateway socket, simulated engine', () => {
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
      env: { SIM_QR_INTERVAL_MS: '300', SIM_READY_DELAY_MS: '100', PAIRING_CODE_REFRESH_MS: String(REFRESH_MS) },
    });
  }, 120_000);

  afterAll(async () => {
    for (const s of sockets) s.close();
    await sys?.stop();
  });

  it('refuses a number WhatsApp would not take, in plain words, and starts nothing', async () => {
    const user = await devSignIn(sys.gateway.url, 'pair-bad@example.com');
    const tab = await open(user.token);
    for (const phoneNumber of ['12ab', '1234567', '1234567890123456', 42]) {
      const ack = await tab.ask('requestPairingCode', { phoneNumber });
      expect(ack).toEqual({ code: expect.any(String), message: SESSION_MESSAGES.pairingPhoneInvalid });
    }
    expect(await tab.ask('requestPairingCode', {})).toMatchObject({ message: SESSION_MESSAGES.pairingPhoneInvalid });
    await sleep(300);
    expect(tab.named('pairing_code')).toHaveLength(0);
    expect(tab.named('qr')).toHaveLength(0);
    tab.emit('createSession', { id: user.userId, clerkUserId: user.userId });
    await tab.waitFor('no_session');
  });

  it('without createSession: 8-character codes renewed with their expiry, a wrong code refused, the right one links that number', async () => {
    const user = await devSignIn(sys.gateway.url, 'pair-ok@example.com');
    const http = api(sys.gateway.url, user.token);
    const tab = await open(user.token);
    const asked = Date.now();
    expect(await tab.ask('requestPairingCode', { phoneNumber: '+852 9123-4567' })).toEqual({
      sessionId: expect.any(String),
    });
    const first = await tab.waitFor('pairing_code');
    expect(first.payload.code).toMatch(new RegExp(`^[A-Z0-9]{${LIMITS.pairingCodeLength}}$`));
    const expiresIn = Date.parse(first.payload.expiresAt) - asked;
    expect(expiresIn).toBeGreaterThanOrEqual(REFRESH_MS - 50);
    expect(expiresIn).toBeLessThan(REFRESH_MS + 2000);
    // Linking by number shows no QR.
    expect(tab.named('qr')).toHaveLength(0);

    // A second tab joins and sees the code showing.
    const tab2 = await open(user.token);
    tab2.emit('createSession', { id: user.userId, clerkUserId: user.userId });
    await tab2.waitFor('pairing_code');

    // Renewed like WhatsApp's: a new code with a later expiry.
    const second = await waitForValue(
      () => tab.named('pairing_code').find((e) => e.payload.code !== first.payload.code),
      REFRESH_MS * 4,
      'a renewed pairing code',
    );
    expect(Date.parse(second.payload.expiresAt)).toBeGreaterThan(Date.parse(first.payload.expiresAt));

    const wrong = await http.post('/dev/simulator/pair', { code: 'ZZZZ-ZZZZ' });
    expect(wrong.status).toBe(409);
    expect(wrong.body.error).toBe(SESSION_MESSAGES.pairingCodeWrong);
    expect((await http.post('/dev/simulator/pair', {})).status).toBe(400);

    // The phone enters the code showing (typed as WhatsApp shows it, with the dash).
    const showing = tab.named('pairing_code').at(-1)!.payload.code as string;
    const paired = await http.post('/dev/simulator/pair', { code: `${showing.slice(0, 4)}-${showing.slice(4)}` });
    expect(paired.status).toBe(200);
    expect(paired.body).toEqual({ success: true, sessionId: expect.any(String), phoneNumber: '85291234567' });
    const ready = await tab.waitFor('ready');
    expect(ready.payload).toEqual({ id: paired.body.sessionId, phoneNumber: '85291234567' });
    expect(tab.named('creating').length).toBeGreaterThan(0);

    // No more codes once linked; asking again is refused in plain words.
    const codes = tab.named('pairing_code').length;
    await sleep(REFRESH_MS * 2);
    expect(tab.named('pairing_code')).toHaveLength(codes);
    expect(await tab.ask('requestPairingCode', { phoneNumber: '85291234567' })).toEqual({
      code: SessionsErrorCode.PairingAlreadyLinked,
      message: SESSION_MESSAGES.pairingAlreadyLinked,
    });
    expect((await http.post('/dev/simulator/pair', { code: showing })).status).toBe(409);
  });

  it('from a QR to a code and back: cancel returns to fresh QR codes, which still link by scan', async () => {
    const user = await devSignIn(sys.gateway.url, 'pair-cancel@example.com');
    const http = api(sys.gateway.url, user.token);
    const tab = await open(user.token);
    tab.emit('createSession', { id: user.userId, clerkUserId: user.userId, isExplicitRequest: true });
    await tab.waitFor('qr', 2);
    await tab.ask('requestPairingCode', { phoneNumber: '91234567' });
    await tab.waitFor('pairing_code');
    const qrsBefore = tab.named('qr').length;
    await sleep(700); // QR codes stop while a code shows
    expect(tab.named('qr')).toHaveLength(qrsBefore);
    // The QR's scan is not the way in while a code shows.
    expect((await http.post('/dev/simulator/scan')).status).toBe(409);

    expect(await tab.ask('cancelPairingCode')).toEqual({ cancelled: true });
    const back = await tab.waitFor('qr', qrsBefore + 1);
    expect(back.payload.attempts).toBe(1);
    const codes = tab.named('pairing_code').length;
    await sleep(REFRESH_MS * 2);
    expect(tab.named('pairing_code')).toHaveLength(codes);
    expect((await http.post('/dev/simulator/pair', { code: 'ABCDEFGH' })).body.error).toBe(
      SESSION_MESSAGES.noPendingPairingCode,
    );
    expect((await http.post('/dev/simulator/scan')).status).toBe(200);
    await tab.waitFor('ready');
    expect(await tab.ask('cancelPairingCode')).toEqual({ cancelled: false });
  });

  it('codes nobody enters end like unscanned QR codes', async () => {
    const user = await devSignIn(sys.gateway.url, 'pair-expire@example.com');
    const tab = await open(user.token);
    await tab.ask('requestPairingCode', { phoneNumber: '85291230000' });
    const max = await tab.waitFor('qr_max_attempts', 1, REFRESH_MS * (LIMITS.pairingCodeMaxCodes + 3));
    expect(tab.named('pairing_code')).toHaveLength(LIMITS.pairingCodeMaxCodes);
    expect(max.payload).toEqual({
      message: SESSION_MESSAGES.pairingCodeMaxCodes,
      attempts: LIMITS.pairingCodeMaxCodes,
    });
    tab.emit('createSession', { id: user.userId, clerkUserId: user.userId });
    await tab.waitFor('no_session');
  });
});
