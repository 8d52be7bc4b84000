import { describe, expect, it } from '@jest/globals';
import { Webhook } from 'standardwebhooks';
import { INTEGRATIONS_LIMITS, INTEGRATIONS_MESSAGES } from '@bns/contracts';
import { retryDelayMs } from '../dispatcher.js';
import { AllowList, urlProblem } from '../egress.js';
import { campaignTransition, sourceEventOf } from '../event-mapping.js';
import { newWebhookSecret, signatureHeader, webhookIdOf } from '../signing.js';

describe('signing', () => {
  it('signs so that the standardwebhooks package verifies, with the old secret beside the new one', () => {
    const current = newWebhookSecret();
    const old = newWebhookSecret();
    expect(current).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);
    const body = JSON.stringify({
      type: 'message.sent',
      timestamp: new Date().toISOString(),
      data: { to: '91234567' },
    });
    const id = webhookIdOf('event-1');
    const ts = Math.floor(Date.now() / 1000);
    const headers = {
      'webhook-id': id,
      'webhook-timestamp': String(ts),
      'webhook-signature': signatureHeader([current, old], id, ts, body),
    };
    expect(new Webhook(current).verify(body, headers)).toMatchObject({ type: 'message.sent' });
    expect(new Webhook(old).verify(body, headers)).toMatchObject({ type: 'message.sent' });
    expect(() => new Webhook(newWebhookSecret()).verify(body, headers)).toThrow();
    expect(() => new Webhook(current).verify(body.replace('91234567', '91234568'), headers)).toThrow();
  });

  it('gives every delivery of one event the same webhook-id', () => {
    expect(webhookIdOf('e-1')).toBe(webhookIdOf('e-1'));
    expect(webhookIdOf('e-1')).not.toBe(webhookIdOf('e-2'));
  });
});

describe('egress rules', () => {
  const none = new AllowList([]);
  it.each([
    'http://127.0.0.1:8080/x',
    'https://127.0.0.1/x',
    'https://10.0.0.1/x',
    'https://169.254.169.254/latest/meta-data',
    'https://192.168.1.1/',
    'https://[::1]/',
    'https://[::ffff:10.0.0.1]/',
    'https://224.0.0.1/',
    'https://0.0.0.0/',
    'https://100.64.0.1/',
  ])('refuses %s without the allow-list', async (url) => {
    expect(await urlProblem(url, none)).toMatch(/not allowed|must be an https/);
  });

  it('refuses plain http to a public address, credentials and non-URLs', async () => {
    expect(await urlProblem('http://93.184.216.34/', none)).toBe(INTEGRATIONS_MESSAGES.webhookUrlInvalid);
    expect(await urlProblem('https://user:pw@93.184.216.34/', none)).toBe(
      INTEGRATIONS_MESSAGES.webhookUrlHasCredentials,
    );
    expect(await urlProblem('not a url', none)).toBe(INTEGRATIONS_MESSAGES.webhookUrlInvalid);
    expect(await urlProblem('ftp://93.184.216.34/', none)).toBe(INTEGRATIONS_MESSAGES.webhookUrlInvalid);
  });

  it('accepts a public https address', async () => {
    expect(await urlProblem('https://93.184.216.34/hook', none)).toBeUndefined();
  });

  it('lets allowed hosts and CIDRs through, over plain http too', async () => {
    const allow = new AllowList(['localhost', '127.0.0.0/8', '10.1.2.3']);
    expect(await urlProblem('http://127.0.0.1:9999/hook', allow)).toBeUndefined();
    expect(await urlProblem('http://localhost:9999/hook', allow)).toBeUndefined();
    expect(await urlProblem('https://10.1.2.3/hook', allow)).toBeUndefined();
    expect(await urlProblem('https://10.1.2.4/hook', allow)).toBe(INTEGRATIONS_MESSAGES.webhookUrlRefused);
    expect(await urlProblem('http://10.1.2.4/hook', allow)).toBe(INTEGRATIONS_MESSAGES.webhookUrlInvalid);
  });

  it('names a bad allow-list entry', () => {
    expect(AllowList.problems(['10.0.0.0/99'])).toHaveLength(1);
    expect(AllowList.problems(['localhost', '10.0.0.0/8', '::1'])).toEqual([]);
  });
});

describe('retry schedule', () => {
  it('waits the schedule ± 20 % and gives up after the last step, about a day in all', () => {
    const steps = INTEGRATIONS_LIMITS.webhookRetryScheduleMs;
    expect(retryDelayMs(1, 1, () => 0.5)).toBe(steps[0]);
    expect(retryDelayMs(1, 1, () => 0)).toBe(steps[0] * 0.8);
    expect(retryDelayMs(1, 1, () => 1)).toBe(steps[0] * 1.2);
    expect(retryDelayMs(steps.length + 1, 1)).toBeUndefined();
    const total = steps.reduce((a, b) => a + b, 0);
    expect(total).toBeGreaterThan(20 * 3600_000);
    expect(total).toBeLessThan(30 * 3600_000);
    expect(retryDelayMs(2, 1000, () => 0.5)).toBe(300);
  });
});

describe('event mapping', () => {
  const envelope = { eventId: 'e1', userId: 'u1', at: '2026-01-01T00:00:00.000Z' };
  it('turns message statuses, replies and session states into webhook events', () => {
    expect(
      sourceEventOf('events.message.status', {
        ...envelope,
        jobId: 'j',
        idempotencyKey: 'k',
        recipient: '91234567',
        status: 'delivered',
        content: 'hi',
      }),
    ).toMatchObject({
      webhook: { type: 'message.delivered', data: { campaignId: 'j', to: '91234567' } },
    });
    expect(
      sourceEventOf('events.message.status', {
        ...envelope,
        jobId: 'j',
        idempotencyKey: 'k',
        recipient: '9',
        status: 'pending',
        content: 'hi',
      }),
    ).toBeUndefined();
    expect(
      sourceEventOf('events.message.received', { ...envelope, from: '85291234567', text: 'STOP', messageId: 'm' }),
    ).toMatchObject({ webhook: { type: 'message.received' } });
    expect(sourceEventOf('events.session.state', { ...envelope, state: 'ready' })).toMatchObject({
      webhook: { type: 'session.connected' },
    });
    expect(sourceEventOf('events.session.state', { ...envelope, state: 'qr' })).toBeUndefined();
    expect(
      sourceEventOf('events.job.log', { ...envelope, jobId: 'j', type: 'info', message: 'x', timestamp: envelope.at }),
    ).toBeUndefined();
    expect(sourceEventOf('events.message.status', { ...envelope })).toEqual(expect.stringContaining('is not valid'));
  });

  it('tells campaign transitions apart', () => {
    expect(campaignTransition(undefined, 'running')).toBe('campaign.started');
    expect(campaignTransition('queued', 'running')).toBe('campaign.started');
    expect(campaignTransition('running', 'paused')).toBe('campaign.paused');
    expect(campaignTransition('paused', 'running')).toBe('campaign.resumed');
    expect(campaignTransition('running', 'completed')).toBe('campaign.completed');
    expect(campaignTransition('paused', 'cancelled')).toBe('campaign.cancelled');
    expect(campaignTransition('running', 'running')).toBeUndefined();
    expect(campaignTransition(undefined, 'queued')).toBeUndefined();
  });
});
