import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { SESSION_MESSAGES } from '@bns/contracts';
import { api, devSignIn, sleep, startSystem, waitFor, type System } from '@bns/testing';
import { linkUser, outbox, type LinkedUser } from './link-helpers.js';

const PREF_TIMEOUT_MS = 1000;

describe('auto-login success message, driven by the dashboard preference', () => {
  let sys: System;
  const linked: LinkedUser[] = [];

  beforeAll(async () => {
    // The real dashboard service owns the preference; sessions asks it over NATS.
    sys = await startSystem({
      shards: 2,
      services: ['dashboard', 'sessions'],
      env: {
        SIM_QR_INTERVAL_MS: '5000',
        SIM_READY_DELAY_MS: '50',
        AUTO_LOGIN_PREF_TIMEOUT_MS: String(PREF_TIMEOUT_MS),
      },
    });
  }, 120_000);

  afterAll(async () => {
    for (const u of linked) u.tab.close();
    await sys?.stop();
  });

  const welcomes = async (u: { token: string }) =>
    (await outbox(sys.gateway.url, u.token)).filter((m) => m.text === SESSION_MESSAGES.autoLoginSuccess);

  it('is sent to the account’s own number once per new link when the preference is on (the default)', async () => {
    const first = await linkUser(sys.gateway.url, 'welcome-on@example.com');
    linked.push(first);
    await waitFor(async () => (await welcomes(first)).length === 1, 10_000);
    expect(await welcomes(first)).toEqual([
      {
        to: first.phoneNumber,
        text: SESSION_MESSAGES.autoLoginSuccess,
        idempotencyKey: `welcome:${first.sessionId}`,
        at: expect.any(String),
        lid: expect.stringMatching(/@lid$/),
      },
    ]);

    // The phone unlinks and the user links again: a new link, so one more message, to the new number.
    await api(sys.gateway.url, first.token).post('/dev/simulator/disconnect');
    await first.tab.waitFor('disconnected');
    const again = await linkUser(sys.gateway.url, 'welcome-on@example.com');
    linked.push(again);
    await waitFor(async () => (await welcomes(again)).length === 2, 10_000);
    expect((await welcomes(again)).map((m) => m.to)).toEqual([first.phoneNumber, again.phoneNumber]);
    await sleep(PREF_TIMEOUT_MS);
    expect(await welcomes(again)).toHaveLength(2);
  });

  it('is not sent when the user turned the preference off', async () => {
    const user = await devSignIn(sys.gateway.url, 'welcome-off@example.com');
    const saved = await api(sys.gateway.url, user.token).post('/api/user/preferences', {
      clerkUserId: user.userId,
      preferences: { auto_login_message_enabled: false },
    });
    expect(saved.status).toBe(200);

    const off = await linkUser(sys.gateway.url, 'welcome-off@example.com');
    linked.push(off);
    // Past the lookup's timeout, so a message would have been sent by now even on the default path.
    await sleep(PREF_TIMEOUT_MS * 2);
    expect(await outbox(sys.gateway.url, off.token)).toEqual([]);
  });
});
