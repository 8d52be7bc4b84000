import { useEffect, useId, useState } from 'react';
import {
  POLICY_EXPLANATIONS,
  POLICY_MESSAGES,
  POLICY_PRESETS,
  type PolicyPreset,
  type PolicyUpdate,
  type SendingPolicy,
} from '@bns/contracts';
import { errorMessage } from '../../api/errors.js';
import { useAppSelector } from '../../app/hooks.js';
import { selectUserId } from '../auth/slice.js';
import { toast } from '../toasts/toasts.js';
import { PRESET_LABEL } from './format.js';
import { useGetSendingPolicyQuery, useSetSendingPolicyMutation } from './pacingApi.js';
import { SendsTodayLine } from './SendsTodayLine.js';

const DAYS = ['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun'];

interface Draft {
  delayS: string;
  jitterS: string;
  pauseEvery: string;
  pauseMin: string;
  dailyCap: string;
  windowOn: boolean;
  start: string;
  end: string;
  days: number[];
  timeZone: string;
  warmUp: boolean;
  unansweredLimit: string;
}

const draftOf = (p: SendingPolicy): Draft => ({
  delayS: String(p.delayMs / 1000),
  jitterS: String(p.jitterMs / 1000),
  pauseEvery: p.pauseEvery === null ? '' : String(p.pauseEvery),
  pauseMin: p.pauseMs === null ? '' : String(p.pauseMs / 60_000),
  dailyCap: p.dailyCap === null ? '' : String(p.dailyCap),
  windowOn: p.window !== null,
  start: p.window?.start ?? '09:00',
  end: p.window?.end ?? '20:00',
  days: p.window?.days ?? [1, 2, 3, 4, 5, 6, 7],
  timeZone: p.timeZone,
  warmUp: p.warmUp,
  unansweredLimit: p.unansweredLimit == null ? '' : String(p.unansweredLimit),
});

/** The form's values as a policy update; the jobs service checks them and answers which field is wrong. */
function updateOf(d: Draft): PolicyUpdate {
  const num = (v: string) => (v.trim() === '' ? null : Number(v));
  const pauseEvery = num(d.pauseEvery);
  return {
    delayMs: Math.round((num(d.delayS) ?? 0) * 1000),
    jitterMs: Math.round((num(d.jitterS) ?? 0) * 1000),
    pauseEvery,
    pauseMs: pauseEvery === null ? null : Math.round((num(d.pauseMin) ?? 0) * 60_000),
    dailyCap: num(d.dailyCap),
    window: d.windowOn ? { start: d.start, end: d.end, days: d.days } : null,
    timeZone: d.timeZone.trim(),
    warmUp: d.warmUp,
    unansweredLimit: num(d.unansweredLimit),
  };
}

/**
 * "Sending pace": the presets with a line on each; the settings themselves only under Custom (choosing
 * Custom opens them with the values in force, and saving them makes the policy custom).
 */
export function SendingPaceCard() {
  const userId = useAppSelector(selectUserId);
  const id = useId();
  const { data: policy, error } = useGetSendingPolicyQuery(userId);
  const [save, { isLoading: saving }] = useSetSendingPolicyMutation();
  const [draft, setDraft] = useState<Draft | null>(null);
  // Custom picked but not saved yet: the fields show, the policy in force stays as it is.
  const [customPicked, setCustomPicked] = useState(false);
  const [problem, setProblem] = useState<string | null>(null);
  useEffect(() => {
    if (!policy) return;
    setDraft(draftOf(policy));
    setCustomPicked(false);
  }, [policy]);

  const submit = (update: PolicyUpdate) =>
    save({ userId, update })
      .unwrap()
      .then(
        () => {
          setProblem(null);
          toast.success(POLICY_MESSAGES.saved);
        },
        (e: unknown) => setProblem(errorMessage(e)),
      );

  if (error)
    return (
      <section className="card pacing-card" role="alert">
        {POLICY_MESSAGES.loadFailed}: {errorMessage(error)}
      </section>
    );
  if (!policy || !draft) return <section className="card pacing-card">{POLICY_MESSAGES.loading}</section>;
  const chosen: PolicyPreset = customPicked ? 'custom' : policy.preset;
  const set = (patch: Partial<Draft>) => setDraft({ ...draft, ...patch });
  const field = (key: keyof Draft, label: string, explain: string, props: Record<string, unknown> = {}) => (
    <label className="field pacing-field" key={key}>
      <span>{label}</span>
      <input value={String(draft[key])} onChange={(e) => set({ [key]: e.target.value } as Partial<Draft>)} {...props} />
      <small className="muted">{explain}</small>
    </label>
  );

  return (
    <section className="card pacing-card" aria-labelledby={`${id}-title`}>
      <h2 id={`${id}-title`}>Sending pace</h2>
      <p className="muted small">
        How fast and when your number sends. Sending like a person, not a bot, is what protects a number from being
        banned.
      </p>
      <SendsTodayLine />
      <div role="radiogroup" aria-label="Preset" className="pacing-presets">
        {POLICY_PRESETS.map((preset: PolicyPreset) => (
          <label key={preset} className={`pacing-preset ${chosen === preset ? 'selected' : ''}`}>
            <input
              type="radio"
              name={`${id}-preset`}
              checked={chosen === preset}
              disabled={saving}
              onChange={() => {
                setProblem(null);
                if (preset === 'custom') {
                  setDraft(draftOf(policy));
                  setCustomPicked(true);
                } else {
                  setCustomPicked(false);
                  void submit({ preset });
                }
              }}
            />
            <span className="pacing-preset-text">
              <strong>{PRESET_LABEL[preset]}</strong>
              <span className="muted small">{POLICY_EXPLANATIONS[preset]}</span>
            </span>
          </label>
        ))}
      </div>
      {chosen !== 'custom' && problem && (
        <p className="field-error" role="alert">
          {problem}
        </p>
      )}
      {chosen === 'custom' && (
        <form
          className="pacing-fields"
          aria-label="Custom pace"
          onSubmit={(e) => {
            e.preventDefault();
            void submit(updateOf(draft));
          }}
        >
          {field('delayS', 'Gap between messages (seconds)', POLICY_EXPLANATIONS.delayMs, {
            type: 'number',
            step: 0.5,
          })}
          {field('jitterS', 'Random extra gap, up to (seconds)', POLICY_EXPLANATIONS.jitterMs, {
            type: 'number',
            min: 0,
            step: 0.5,
          })}
          {field('pauseEvery', 'Long break every … messages (empty = never)', POLICY_EXPLANATIONS.pauseEvery, {
            type: 'number',
            min: 1,
          })}
          {field('pauseMin', 'Long break (minutes)', POLICY_EXPLANATIONS.pauseMs, {
            type: 'number',
            min: 0,
            step: 0.5,
          })}
          {field('dailyCap', 'Daily limit (empty = none)', POLICY_EXPLANATIONS.dailyCap, { type: 'number', min: 1 })}
          {field(
            'unansweredLimit',
            'Unanswered limit, last 30 days (empty = none)',
            POLICY_EXPLANATIONS.unansweredLimit,
            { type: 'number', min: 1 },
          )}
          {field('timeZone', 'Time zone', POLICY_EXPLANATIONS.timeZone)}
          <fieldset className="pacing-window">
            <legend>
              <label className="inline-check">
                <input type="checkbox" checked={draft.windowOn} onChange={(e) => set({ windowOn: e.target.checked })} />
                <span>Sending hours</span>
              </label>
            </legend>
            <small className="muted">{POLICY_EXPLANATIONS.window}</small>
            {draft.windowOn && (
              <>
                <div className="pacing-hours">
                  <input
                    type="time"
                    aria-label="From"
                    value={draft.start}
                    onChange={(e) => set({ start: e.target.value })}
                  />
                  <span>to</span>
                  <input
                    type="time"
                    aria-label="Until"
                    value={draft.end}
                    onChange={(e) => set({ end: e.target.value })}
                  />
                </div>
                <div className="pacing-days">
                  {DAYS.map((name, i) => (
                    <label key={name} className="inline-check">
                      <input
                        type="checkbox"
                        checked={draft.days.includes(i + 1)}
                        onChange={(e) =>
                          set({
                            days: e.target.checked
                              ? [...draft.days, i + 1].sort()
                              : draft.days.filter((d) => d !== i + 1),
                          })
                        }
                      />
                      <span>{name}</span>
                    </label>
                  ))}
                </div>
              </>
            )}
          </fieldset>
          <div className="pacing-warmup">
            <label className="inline-check">
              <input type="checkbox" checked={draft.warmUp} onChange={(e) => set({ warmUp: e.target.checked })} />
              <span>Warm up a new number</span>
            </label>
            <small className="muted">{POLICY_EXPLANATIONS.warmUp}</small>
          </div>
          {problem && (
            <p className="field-error pacing-wide" role="alert">
              {problem}
            </p>
          )}
          <div className="button-row pacing-wide">
            <button type="submit" className="button primary" disabled={saving}>
              Save pace
            </button>
          </div>
        </form>
      )}
    </section>
  );
}
