import { fireEvent, screen, waitFor } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  carefulPolicy,
  POLICY_EXPLANATIONS,
  POLICY_MESSAGES,
  standardPolicy,
  type SendingPolicy,
  WEB_MESSAGES,
} from '@bns/contracts';
import { connectedState, fakeFetch, renderWithProviders } from '../../../test/renderWithProviders.js';
import { initialJobState } from '../../job/slice.js';
import { StepProgress } from '../../job/StepProgress.js';
import { countsDown } from '../JobPacingStatus.js';
import { ReviewPacing } from '../ReviewPacing.js';
import { whenLabel } from '../format.js';
import { checkSchedule, inputValueOf, SCHEDULE_TEXT, scheduleRefusalText } from '../schedule.js';
import { SendingPaceCard } from '../SendingPaceCard.js';

afterEach(() => vi.unstubAllGlobals());

function policyServer(initial: SendingPolicy) {
  let policy = initial;
  return fakeFetch(async (method, url, body) => {
    if (url.pathname === '/api/sends-today/user_test_1')
      return {
        body: {
          success: true,
          today: {
            date: '2026-06-01',
            timeZone: 'Asia/Hong_Kong',
            sent: 42,
            cap: policy.dailyCap,
            remaining: policy.dailyCap === null ? null : policy.dailyCap - 42,
            unanswered: { month: 120, last30Days: 150, limit: policy.unansweredLimit },
          },
        },
      };
    if (url.pathname !== '/api/sending-policy/user_test_1')
      return { status: 404, body: { success: false, error: 'Not found' } };
    if (method === 'PUT') {
      const update = body as Record<string, unknown>;
      if (update.delayMs !== undefined && (update.delayMs as number) < 1000) {
        return {
          status: 400,
          body: {
            success: false,
            error: POLICY_MESSAGES.delayMs(1000),
            errors: { delayMs: POLICY_MESSAGES.delayMs(1000) },
          },
        };
      }
      policy =
        update.preset === 'careful'
          ? carefulPolicy()
          : { ...policy, ...(update as Partial<SendingPolicy>), preset: 'custom' };
    }
    return { body: { success: true, policy } };
  });
}

describe('Sending pace', () => {
  it('shows the presets with their explanation, switches to Careful, and shows the server’s word on a bad field', async () => {
    const server = policyServer(standardPolicy());
    vi.stubGlobal('fetch', server.fn);
    const user = userEvent.setup();
    renderWithProviders(<SendingPaceCard />, { preloadedState: connectedState() });
    const careful = await screen.findByRole('radio', { name: /Careful \(recommended\)/ });
    expect(screen.getByRole('radio', { name: /Standard/ })).toHaveProperty('checked', true);
    // Standard: no settings to edit, only the presets.
    expect(screen.queryByLabelText(/Gap between messages/)).toBeNull();
    await user.click(careful);
    await waitFor(() => expect(screen.getByRole('radio', { name: /Careful/ })).toHaveProperty('checked', true));
    expect(server.calls.find((c) => c.method === 'PUT')?.body).toEqual({ preset: 'careful' });
    expect(screen.queryByLabelText(/Gap between messages/)).toBeNull();

    // Custom opens the settings with the values in force, and saves nothing by itself.
    await user.click(screen.getByRole('radio', { name: /Custom/ }));
    expect(screen.getByRole('form', { name: 'Custom pace' })).toBeTruthy();
    expect(screen.getByDisplayValue('300')).toBeTruthy(); // careful's daily cap
    expect(server.calls.filter((c) => c.method === 'PUT')).toHaveLength(1);
    // Each preset's name and its explanation are separate lines, not one run of text.
    const standard = screen.getByRole('radio', { name: /Standard/ }).closest('label')!;
    expect(standard.querySelector('strong')?.textContent).toBe('Standard');
    expect(standard.querySelector('.muted')?.textContent).toBe(POLICY_EXPLANATIONS.standard);

    const gap = screen.getByLabelText(/Gap between messages/);
    await user.clear(gap);
    await user.type(gap, '0.5');
    await user.click(screen.getByRole('button', { name: 'Save pace' }));
    expect((await screen.findByRole('alert')).textContent).toBe(POLICY_MESSAGES.delayMs(1000));
  }, 20_000);

  it('shows today’s sends and the unanswered messages beside the pace, and sets the unanswered limit', async () => {
    const server = policyServer(carefulPolicy());
    vi.stubGlobal('fetch', server.fn);
    const user = userEvent.setup();
    renderWithProviders(<SendingPaceCard />, { preloadedState: connectedState() });
    const line = await screen.findByTestId('sends-today');
    expect(line.textContent).toBe(
      'Sent today: 42 of 300 · Unanswered: 120 this month, 150 in the last 30 days (limit 200)',
    );
    await user.click(screen.getByRole('radio', { name: /Custom/ }));
    const limit = screen.getByLabelText(/Unanswered limit/);
    expect((limit as HTMLInputElement).value).toBe('200');
    await user.clear(limit);
    await user.type(limit, '150');
    await user.click(screen.getByRole('button', { name: 'Save pace' }));
    await waitFor(() =>
      expect(server.calls.find((c) => c.method === 'PUT')?.body).toMatchObject({ unansweredLimit: 150 }),
    );
    // The first save has settled the form (its answer came back) before the limit is cleared.
    await waitFor(() => expect((screen.getByLabelText(/Unanswered limit/) as HTMLInputElement).value).toBe('150'));
    await user.clear(screen.getByLabelText(/Unanswered limit/));
    const save = screen.getByRole('button', { name: 'Save pace' }) as HTMLButtonElement;
    await waitFor(() => expect(save.disabled).toBe(false));
    await user.click(save);
    // The second save waits for the first one's answer to settle the form: give it longer than a second.
    await waitFor(
      () =>
        expect(server.calls.filter((c) => c.method === 'PUT').at(-1)?.body).toMatchObject({ unansweredLimit: null }),
      { timeout: 5_000 },
    );
  }, 20_000);

  it('review step: the pace in force, its estimate, and a warning for a large send at the standard pace', async () => {
    vi.stubGlobal('fetch', policyServer(standardPolicy()).fn);
    const user = userEvent.setup();
    const { unmount } = renderWithProviders(<ReviewPacing count={400} message="{Hi|Hello} there" />, {
      preloadedState: connectedState(),
    });
    expect(await screen.findByText(POLICY_MESSAGES.standardLargeWarning)).toBeTruthy();
    // Change opens the Sending pace card in place, styled as the app's buttons; Close puts it away.
    const change = screen.getByRole('button', { name: 'Change' });
    expect(change.className).toContain('button secondary');
    await user.click(change);
    expect(await screen.findByRole('radiogroup', { name: 'Preset' })).toBeTruthy();
    await user.click(screen.getByRole('button', { name: 'Close' }));
    expect(screen.queryByRole('radiogroup', { name: 'Preset' })).toBeNull();
    expect(screen.getByTestId('review-pacing').textContent).toContain('about 27 min'); // ceil(4 s × 399 / 60 s), the spec's formula
    expect(screen.getByTestId('review-pacing').textContent).toContain('2 variants');
    unmount();

    vi.stubGlobal('fetch', policyServer({ ...carefulPolicy(), window: null, warmUp: false }).fn);
    renderWithProviders(<ReviewPacing count={400} message="Hi" />, { preloadedState: connectedState() });
    expect(await screen.findByText(/Careful/)).toBeTruthy();
    expect(screen.queryByText(POLICY_MESSAGES.standardLargeWarning)).toBeNull();
    // Capped at 300 a day: the rest waits for tomorrow, so hours, not minutes.
    expect(screen.getByTestId('review-pacing').textContent).toMatch(/about (\d+ days?|\d+ h)/);
  });

  it('send later: checked in the user’s words before sending, and the pace box says until when', async () => {
    vi.stubGlobal('fetch', policyServer(standardPolicy()).fn);
    const user = userEvent.setup();
    const { store } = renderWithProviders(<ReviewPacing count={3} message="Hi" />, {
      preloadedState: connectedState(),
    });
    await user.click(await screen.findByRole('checkbox', { name: 'Send later' }));
    // Ticked with no time yet: not ready (Start stays disabled), a hint rather than an error.
    expect(store.getState().pacing).toMatchObject({ later: true, startAt: null });
    expect(screen.getByText(SCHEDULE_TEXT.choose)).toBeTruthy();
    expect(screen.queryByRole('alert')).toBeNull();
    const input = screen.getByLabelText('Start sending at');
    fireEvent.change(input, { target: { value: inputValueOf(new Date(Date.now() - 3_600_000)) } });
    expect((await screen.findByRole('alert')).textContent).toBe('Choose a time in the future');
    expect(store.getState().pacing.startAt).toBeNull();
    fireEvent.change(input, { target: { value: inputValueOf(new Date(Date.now() + 31 * 86_400_000)) } });
    expect(screen.getByRole('alert').textContent).toBe('Choose a time within 30 days');
    const tomorrow = new Date(Date.now() + 86_400_000);
    fireEvent.change(input, { target: { value: inputValueOf(tomorrow) } });
    expect(screen.queryByRole('alert')).toBeNull();
    expect(Math.abs(Date.parse(store.getState().pacing.startAt!) - tomorrow.getTime())).toBeLessThan(60_000);
    // A sentence of its own, not a dash after the input, and one pair of brackets at most.
    const waits = screen.getByText(/^The job waits as scheduled until /);
    expect(waits.textContent).not.toContain('—');
    expect(waits.textContent).not.toMatch(/\)\)|\(.*\(/);
    await user.click(screen.getByRole('checkbox', { name: 'Send later' }));
    expect(store.getState().pacing).toMatchObject({ later: false, startAt: null });
  });

  it('the web’s words replace the server’s for a start time it refuses', () => {
    const now = new Date('2026-01-01T00:00:00Z');
    expect(checkSchedule('', now)).toMatchObject({ ok: false, empty: true });
    expect(checkSchedule('2025-12-31T23:00:00Z', now)).toMatchObject({ ok: false, message: SCHEDULE_TEXT.past });
    expect(checkSchedule('2026-03-01T00:00:00Z', now)).toMatchObject({ ok: false, message: SCHEDULE_TEXT.tooFar });
    expect(checkSchedule('2026-01-02T00:00:00Z', now)).toEqual({ ok: true, startAt: '2026-01-02T00:00:00.000Z' });
    expect(scheduleRefusalText(POLICY_MESSAGES.startAtPast)).toBe(SCHEDULE_TEXT.past);
    expect(scheduleRefusalText(POLICY_MESSAGES.startAtTooFar)).toBe(SCHEDULE_TEXT.tooFar);
  });

  it('counts down only while sending: not while paused, scheduled, queued or waiting for WhatsApp to be linked again', () => {
    expect(countsDown({ status: 'running', pausedReason: null })).toBe(true);
    expect(countsDown({ status: 'running', pausedReason: 'unlinked' })).toBe(false);
    for (const status of ['paused', 'scheduled', 'queued', 'completed'] as const)
      expect(countsDown({ status, pausedReason: null })).toBe(false);
  });

  it('the progress view: a scheduled job says when it starts, a paused one why, and neither counts down', () => {
    vi.stubGlobal('fetch', fakeFetch(() => ({ status: 404, body: { success: false, error: 'Not found' } })).fn);
    const job = {
      ...initialJobState,
      phase: 'progress' as const,
      jobId: 'j1',
      monitoring: true,
      progress: { total: 3, sent: 0, failed: 0 },
    };
    const startAt = new Date(Date.now() + 3_600_000).toISOString();
    const first = renderWithProviders(<StepProgress />, {
      preloadedState: { ...connectedState(), job: { ...job, status: 'scheduled', startAt, nextSendAt: startAt } },
    });
    expect(screen.getByText(/^Scheduled: sending starts /)).toBeTruthy();
    expect(screen.queryByText(/Next message in/)).toBeNull();
    expect(screen.queryByText('Preparing the next message…')).toBeNull();
    first.unmount();

    const unlinked = renderWithProviders(<StepProgress />, {
      preloadedState: {
        ...connectedState(),
        job: {
          ...job,
          status: 'running',
          pausedReason: 'unlinked',
          nextSendAt: new Date(Date.now() + 5000).toISOString(),
        },
      },
    });
    // Waiting for the phone: paused, with a Link button, and no resume time (nothing resumes by the clock).
    expect(screen.getByText(WEB_MESSAGES.pausedUnlinked)).toBeTruthy();
    expect(screen.queryByText(/sending resumes/)).toBeNull();
    expect(screen.queryByText(/Next message in/)).toBeNull();
    expect(screen.queryByText('Sending')).toBeNull();
    unlinked.unmount();
    const unlinkedAndGone = renderWithProviders(<StepProgress />, {
      preloadedState: {
        connection: { ...connectedState().connection!, status: 'no_session', phoneNumber: null },
        job: { ...job, status: 'running', pausedReason: 'unlinked', resumesAt: new Date().toISOString() },
      },
    });
    expect(screen.getByRole('button', { name: WEB_MESSAGES.linkWhatsApp })).toBeTruthy();
    expect(screen.queryByText(/sending resumes/)).toBeNull();
    unlinkedAndGone.unmount();

    // The server cannot be reached: no countdown (the connection banner says why).
    const offline = renderWithProviders(<StepProgress />, {
      preloadedState: {
        connection: { ...connectedState().connection!, socket: 'reconnecting', offlineSince: Date.now() },
        job: { ...job, status: 'running', nextSendAt: new Date(Date.now() + 5000).toISOString() },
      },
    });
    expect(screen.queryByText(/Next message in/)).toBeNull();
    offline.unmount();

    renderWithProviders(<StepProgress />, {
      preloadedState: {
        ...connectedState(),
        job: { ...job, status: 'running', nextSendAt: new Date(Date.now() + 5000).toISOString() },
      },
    });
    expect(screen.getByText(/Next message in/)).toBeTruthy();
  });

  it('a time in the account’s zone reads in one pair of brackets, the day only when it differs', () => {
    const browserZone = Intl.DateTimeFormat().resolvedOptions().timeZone;
    const zone = browserZone === 'Asia/Hong_Kong' ? 'Europe/London' : 'Asia/Hong_Kong';
    const label = whenLabel('2026-11-25T09:30:00.000Z', zone);
    expect(label).toMatch(/^[^()]+ \([^()]+ (Hong Kong|London) time\)$/);
    expect(whenLabel('2026-11-25T09:30:00.000Z', browserZone)).not.toContain('(');
    expect(whenLabel('2026-11-25T09:30:00.000Z', 'Not/A_Zone')).not.toContain('(');
  });
});
