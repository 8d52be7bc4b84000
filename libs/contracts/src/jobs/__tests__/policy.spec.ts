import { describe, expect, it } from '@jest/globals';
import { estimateMinutes } from '../../common/limits.js';
import {
  applyPolicyUpdate,
  carefulPolicy,
  checkStartAt,
  POLICY_LIMITS,
  POLICY_MESSAGES,
  standardPolicy,
  unansweredCounts,
} from '../policy.js';
import { estimateSend, gateAt, localTime, pickVariation, variantCount, zonedInstant } from '../schedule.js';

const HK = 'Asia/Hong_Kong';
const none = { dayKey: null, dayCount: 0, warmUpFrom: null };

describe('sending policy updates', () => {
  const std = standardPolicy();
  it('switches presets and turns any edit into custom', () => {
    expect(applyPolicyUpdate(std, { preset: 'careful' })).toEqual({ ok: true, policy: carefulPolicy() });
    const edited = applyPolicyUpdate(carefulPolicy(), { dailyCap: 100 });
    expect(edited.ok && edited.policy).toMatchObject({ preset: 'custom', dailyCap: 100, delayMs: 5000 });
    const back = applyPolicyUpdate(std, { delayMs: 4000 });
    expect(back.ok && back.policy.preset).toBe('standard');
  });
  it.each([
    [{ delayMs: 999 }, 'delayMs', POLICY_MESSAGES.delayMs(1000)],
    [{ jitterMs: -1 }, 'jitterMs', POLICY_MESSAGES.jitterMs],
    [{ dailyCap: 0 }, 'dailyCap', POLICY_MESSAGES.dailyCap],
    [{ pauseEvery: 10 }, 'pauseMs', POLICY_MESSAGES.pauseIncomplete],
    [{ window: { start: '20:00', end: '09:00', days: [1] } }, 'window.end', POLICY_MESSAGES.windowOrder],
    [{ window: { start: '9am', end: '10:00' } }, 'window.start', POLICY_MESSAGES.windowTime('start')],
    [{ window: { start: '09:00', end: '10:00', days: [0] } }, 'window.days', POLICY_MESSAGES.windowDays],
    [{ timeZone: 'Mars/Olympus' }, 'timeZone', POLICY_MESSAGES.timeZone('Mars/Olympus')],
    [{ speed: 'fast' }, 'speed', POLICY_MESSAGES.unknownField('speed')],
    [{ preset: 'reckless' }, 'preset', POLICY_MESSAGES.preset],
    [{ warmUp: 'yes' }, 'warmUp', POLICY_MESSAGES.warmUp],
  ])('refuses %j naming the field', (update, field, message) => {
    expect(applyPolicyUpdate(std, update)).toEqual({ ok: false, field, message });
  });
  it('checks startAt: ISO, future, at most 30 days', () => {
    const now = new Date('2026-01-01T00:00:00Z');
    expect(checkStartAt(undefined, now)).toEqual({ ok: true, startAt: undefined });
    expect(checkStartAt('2026-01-02T00:00:00Z', now)).toEqual({ ok: true, startAt: new Date('2026-01-02T00:00:00Z') });
    expect(checkStartAt('tomorrow', now)).toEqual({ ok: false, message: POLICY_MESSAGES.startAtInvalid });
    expect(checkStartAt('2025-12-31T00:00:00Z', now)).toEqual({ ok: false, message: POLICY_MESSAGES.startAtPast });
    expect(checkStartAt('2026-02-01T00:00:01Z', now)).toEqual({ ok: false, message: POLICY_MESSAGES.startAtTooFar });
  });
});

describe('schedule', () => {
  it('converts wall-clock times of a time zone', () => {
    expect(zonedInstant('2026-03-10', 9 * 60, HK).toISOString()).toBe('2026-03-10T01:00:00.000Z');
    expect(zonedInstant('2026-07-01', 0, 'America/New_York').toISOString()).toBe('2026-07-01T04:00:00.000Z');
    expect(localTime(new Date('2026-03-09T16:30:00Z'), HK)).toEqual({ date: '2026-03-10', minutes: 30, weekday: 2 });
  });
  it('reads the wall clock of a minute it has seen before exactly as formatting would, across offset changes', () => {
    // The reference: each instant formatted on its own, no cache.
    const reference = (at: Date, timeZone: string) => {
      const p = Object.fromEntries(
        new Intl.DateTimeFormat('en-US', {
          timeZone,
          hourCycle: 'h23',
          year: 'numeric',
          month: '2-digit',
          day: '2-digit',
          hour: '2-digit',
          minute: '2-digit',
        })
          .formatToParts(at)
          .filter((x) => x.type !== 'literal')
          .map((x) => [x.type, Number(x.value)]),
      );
      const date = `${String(p.year).padStart(4, '0')}-${String(p.month).padStart(2, '0')}-${String(p.day).padStart(2, '0')}`;
      return { date, minutes: (p.hour! % 24) * 60 + p.minute! };
    };
    const zones = [
      'America/New_York',
      'Europe/London',
      'Asia/Kolkata',
      'Asia/Kathmandu',
      'Australia/Lord_Howe',
      'Europe/Amsterdam',
      HK,
      'UTC',
    ];
    // Seconds on both sides of DST changes (New York, London, Lord Howe's half hour), and instants from 1850 (local mean time, offsets with seconds) to 2040.
    const instants = [
      ...Array.from({ length: 240 }, (_, i) => Date.parse('2026-03-08T06:58:00Z') + i * 997),
      ...Array.from({ length: 240 }, (_, i) => Date.parse('2026-03-29T00:58:00Z') + i * 997),
      ...Array.from({ length: 240 }, (_, i) => Date.parse('2026-04-04T14:58:00Z') + i * 997),
      ...Array.from(
        { length: 400 },
        (_, i) => Date.parse('1850-01-01T00:00:00Z') + i * 4_733_333_333 + (i % 60) * 1000,
      ),
    ];
    for (const timeZone of zones) {
      for (const t of instants) {
        const at = new Date(t);
        const want = reference(at, timeZone);
        expect({ timeZone, at: at.toISOString(), ...localTime(at, timeZone) }).toEqual({
          timeZone,
          at: at.toISOString(),
          ...want,
          weekday: expect.any(Number),
        });
      }
    }
    // zonedInstant leans on the seconds: in 1850 Amsterdam's clock (tzdata: Brussels' local mean time) was UTC+00:17:30.
    expect(zonedInstant('1850-06-01', 0, 'Europe/Amsterdam').toISOString()).toBe('1850-05-31T23:42:30.000Z');
    expect(zonedInstant('2026-11-01', 12 * 60, 'America/New_York').toISOString()).toBe('2026-11-01T17:00:00.000Z');
  });
  it('closes outside the window and at the cap, with when it opens again', () => {
    const p = { ...carefulPolicy(), warmUp: false, dailyCap: 3 };
    expect(gateAt(p, new Date('2026-03-10T00:00:00Z'), none)).toEqual({
      open: false,
      reason: 'window',
      resumesAt: new Date('2026-03-10T01:00:00Z'),
      cap: 3,
    });
    expect(gateAt(p, new Date('2026-03-10T02:00:00Z'), none)).toMatchObject({ open: true });
    expect(
      gateAt(p, new Date('2026-03-10T02:00:00Z'), { dayKey: '2026-03-10', dayCount: 3, warmUpFrom: null }),
    ).toEqual({
      open: false,
      reason: 'daily_cap',
      resumesAt: new Date('2026-03-11T01:00:00Z'),
      cap: 3,
    });
  });
  it('warms a new number up: its cap ramps over the first days, then the policy cap holds', () => {
    const p = { ...carefulPolicy(), window: null };
    const at = (day: string) => new Date(`${day}T04:00:00Z`); // noon in Hong Kong
    expect(gateAt(p, at('2026-03-10'), { dayKey: '2026-03-10', dayCount: 49, warmUpFrom: null })).toMatchObject({
      open: true,
      cap: 50,
    });
    expect(gateAt(p, at('2026-03-10'), { dayKey: '2026-03-10', dayCount: 50, warmUpFrom: '2026-03-10' })).toMatchObject(
      { open: false, reason: 'daily_cap', cap: 50 },
    );
    expect(gateAt(p, at('2026-03-11'), { dayKey: '2026-03-10', dayCount: 50, warmUpFrom: '2026-03-10' })).toMatchObject(
      { open: true, cap: 100, sentToday: 0 },
    );
    expect(gateAt(p, at('2026-03-13'), { dayKey: null, dayCount: 0, warmUpFrom: '2026-03-10' })).toMatchObject({
      cap: 300,
    }); // day 4: min(400, 300)
    expect(gateAt({ ...p, warmUp: false }, at('2026-03-10'), none)).toMatchObject({ cap: 300 });
  });

  it('estimates: the spec formula under standard, days under a daily cap', () => {
    const now = new Date('2026-03-10T02:00:00Z');
    for (const n of [1, 2, 3, 16, 1000])
      expect(estimateSend(n, standardPolicy(), { now }).estimatedTime).toBe(estimateMinutes(n, 4000));
    const capped = estimateSend(2000, { ...standardPolicy(), preset: 'custom', dailyCap: 500 }, { now });
    // 500 today from 10:00, 500 on each of the next three days from midnight.
    expect(capped.estimatedTime).toBeGreaterThan(2 * 24 * 60);
    expect(capped.estimatedTime).toBeLessThan(3 * 24 * 60);
    const careful = estimateSend(100, carefulPolicy(), { now });
    expect(careful.estimatedTime).toBeGreaterThanOrEqual(Math.ceil((99 * 10_000 + 3 * 180_000) / 60_000));
  });
  it('varies text per recipient, the same every time', () => {
    const text = '{Hello|Hi|Hey} {{name}}, {see you|bye}!';
    expect(variantCount(text)).toBe(6);
    expect(variantCount('Hello {{name}}')).toBe(1);
    const a = pickVariation(text, 'job:91234567');
    expect(pickVariation(text, 'job:91234567')).toBe(a);
    expect(a).toMatch(/^(Hello|Hi|Hey) \{\{name\}\}, (see you|bye)!$/);
    const seen = new Set(Array.from({ length: 50 }, (_, i) => pickVariation(text, `job:${i}`)));
    expect(seen.size).toBeGreaterThan(3);
  });
});

describe('the unanswered budget', () => {
  it('is off by default; careful sets 200; a limit is a whole number or null, refused in plain words', () => {
    expect(standardPolicy().unansweredLimit).toBeNull();
    expect(carefulPolicy().unansweredLimit).toBe(POLICY_LIMITS.carefulUnansweredLimit);
    const set = applyPolicyUpdate(standardPolicy(), { unansweredLimit: 150 });
    expect(set).toMatchObject({ ok: true, policy: { unansweredLimit: 150, preset: 'custom' } });
    const off = applyPolicyUpdate(carefulPolicy(), { unansweredLimit: null });
    expect(off).toMatchObject({ ok: true, policy: { unansweredLimit: null, preset: 'custom' } });
    for (const bad of [0, -1, 1.5, '10', POLICY_LIMITS.maxUnansweredLimit + 1])
      expect(applyPolicyUpdate(standardPolicy(), { unansweredLimit: bad })).toEqual({
        ok: false,
        field: 'unansweredLimit',
        message: POLICY_MESSAGES.unansweredLimit,
      });
  });

  it('counts this calendar month and the rolling 30 days, today included, from the counts by day', () => {
    const days = {
      '2026-10-31': 7,
      '2026-11-02': 5,
      '2026-11-03': 1,
      '2026-11-30': 2,
      '2026-12-01': 3,
      '2026-12-02': 4,
    };
    expect(unansweredCounts(days, '2026-12-02')).toEqual({ month: 7, last30Days: 10 });
    expect(unansweredCounts(days, '2026-12-01')).toEqual({ month: 3, last30Days: 11 });
    expect(unansweredCounts(undefined, '2026-12-02')).toEqual({ month: 0, last30Days: 0 });
  });
});
