import { useEffect, useState, type FormEvent } from 'react';
import { formatPairingCode, pairingPhoneNumber, SESSION_MESSAGES, WEB_MESSAGES } from '@bns/contracts';
import { useAppDispatch, useAppSelector } from '../../app/hooks.js';
import { Spinner } from '../../components/Spinner.js';
import { useSimulatorPairMutation } from '../../api/api.js';
import { errorMessage } from '../../api/errors.js';
import { toast } from '../toasts/toasts.js';
import { selectConnection } from './slice.js';
import { pairingCancelAsked, pairingCodeAsked } from './socketMiddleware.js';
import { useSimulatedEngine } from './SimulatorControls.js';

/** "Link with phone number instead": a button that opens the number's form, beside the QR. */
export function LinkWithPhone() {
  const dispatch = useAppDispatch();
  const { pairingError } = useAppSelector(selectConnection);
  const [open, setOpen] = useState(Boolean(pairingError));
  const [phoneNumber, setPhoneNumber] = useState('');
  const [problem, setProblem] = useState<string | null>(null);
  const shown = problem ?? pairingError ?? null;

  if (!open)
    return (
      <button type="button" className="button link-button" onClick={() => setOpen(true)}>
        {WEB_MESSAGES.linkWithPhone}
      </button>
    );
  const submit = (e: FormEvent) => {
    e.preventDefault();
    // The same rule the server applies; its own refusal still shows if it says otherwise.
    if (!pairingPhoneNumber(phoneNumber)) return setProblem(SESSION_MESSAGES.pairingPhoneInvalid);
    setProblem(null);
    dispatch(pairingCodeAsked({ phoneNumber }));
  };
  return (
    <form className="pairing-form" onSubmit={submit} aria-label={WEB_MESSAGES.linkWithPhone} noValidate>
      <label htmlFor="pairing-phone">{WEB_MESSAGES.pairingPhoneLabel}</label>
      <div className="pairing-row">
        <input
          id="pairing-phone"
          type="tel"
          inputMode="tel"
          autoComplete="tel"
          placeholder="85291234567"
          value={phoneNumber}
          onChange={(e) => setPhoneNumber(e.target.value)}
          aria-invalid={shown ? true : undefined}
          aria-describedby={shown ? 'pairing-phone-error' : undefined}
        />
        <button type="submit" className="button primary">
          {WEB_MESSAGES.pairingGetCode}
        </button>
      </div>
      {shown && (
        <p id="pairing-phone-error" className="field-error" role="alert">
          {shown}
        </p>
      )}
    </form>
  );
}

/** "2:05" from milliseconds. */
function minutesSeconds(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, '0')}`;
}

function useNow(intervalMs: number): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), intervalMs);
    return () => clearInterval(timer);
  }, [intervalMs]);
  return now;
}

/** The code to enter on the phone, its steps, when a new one replaces it, and Cancel (back to the QR). */
export function PairingCodeCard() {
  const dispatch = useAppDispatch();
  const { pairing } = useAppSelector(selectConnection);
  const simulated = useSimulatedEngine();
  const now = useNow(1000);
  const cancel = (
    <button type="button" className="button secondary" onClick={() => dispatch(pairingCancelAsked())}>
      {WEB_MESSAGES.pairingCancel}
    </button>
  );
  if (!pairing)
    return (
      <div className="card connection-card">
        <Spinner label={WEB_MESSAGES.pairingRequesting} />
        {cancel}
      </div>
    );
  const expires = Date.parse(pairing.expiresAt);
  return (
    <div className="card connection-card pairing-card">
      <h2>{WEB_MESSAGES.pairingTitle}</h2>
      <p className="pairing-code" aria-label={WEB_MESSAGES.pairingCodeLabel} data-code={pairing.code}>
        {formatPairingCode(pairing.code)}
      </p>
      {Number.isFinite(expires) && (
        <p className="muted small" aria-live="polite">
          {WEB_MESSAGES.pairingExpires(new Date(expires).toLocaleTimeString(), minutesSeconds(expires - now))}
        </p>
      )}
      <ol className="qr-steps">
        {WEB_MESSAGES.pairingSteps.map((s) => (
          <li key={s}>{s}</li>
        ))}
      </ol>
      {cancel}
      {simulated && <SimulatePair code={pairing.code} />}
    </div>
  );
}

/** Dev only: the simulated phone enters the code showing. */
function SimulatePair({ code }: { code: string }) {
  const [pair, state] = useSimulatorPairMutation();
  return (
    <div className="sim-controls" role="group" aria-label="Simulated phone">
      <span className="badge badge-sim">dev only</span>
      <span className="muted small">{WEB_MESSAGES.simulatorNote}</span>
      <button
        type="button"
        className="button secondary small"
        disabled={state.isLoading}
        onClick={() => {
          pair({ code })
            .unwrap()
            .catch((e: unknown) => toast.error(`${WEB_MESSAGES.simulatorFailed}: ${errorMessage(e)}`));
        }}
      >
        {WEB_MESSAGES.simulatePair}
      </button>
    </div>
  );
}
