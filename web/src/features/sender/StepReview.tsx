import { useMemo, useState } from 'react';
import { estimateMinutes, fillPlaceholders, LIMITS, MESSAGES, placeholdersIn, reviewEstimateMinutes, WEB_MESSAGES } from '@bns/contracts';
import { useAppDispatch, useAppSelector } from '../../app/hooks.js';
import { Dialog } from '../../components/Dialog.js';
import { selectIsConnected } from '../connection/slice.js';
import { startSending } from '../job/thunks.js';
import { selectJobInProgress } from '../job/slice.js';
import { MessagePreview } from './MessagePreview.js';
import { selectMessage, selectPhoneNumbers, selectVariables } from './slice.js';

const minutes = (n: number) => `${n} minute${n === 1 ? '' : 's'}`;

/** Step 2: the preview, the first 5 recipients, the estimate, the checklist and Start Sending. */
export function StepReview() {
  const dispatch = useAppDispatch();
  const message = useAppSelector(selectMessage);
  const numbers = useAppSelector(selectPhoneNumbers);
  const variables = useAppSelector(selectVariables);
  const connected = useAppSelector(selectIsConnected);
  const running = useAppSelector(selectJobInProgress);
  const [confirming, setConfirming] = useState(false);

  const hasMessage = message.trim() !== '';
  const hasNumbers = numbers.length > 0;
  // SPEC §5: Start is disabled when the message or numbers are missing, a send runs, or WhatsApp is not connected.
  const canStart = hasMessage && hasNumbers && connected && !running;
  const first = numbers[0];
  const previewText = first && variables[first] ? fillPlaceholders(message, variables[first]) : message;
  const missing = useMemo(() => {
    const names = placeholdersIn(message);
    if (names.length === 0 || Object.keys(variables).length === 0) return [];
    return names.filter((name) => numbers.some((p) => !Object.hasOwn(variables[p] ?? {}, name)));
  }, [message, numbers, variables]);

  const checklist = [
    { ok: hasMessage, label: 'Message entered' },
    { ok: hasNumbers, label: 'Phone numbers added' },
    { ok: connected, label: 'WhatsApp connected' },
  ];

  return (
    <section className="card step" aria-labelledby="step2-title">
      <h2 id="step2-title">
        <span className="step-number">2</span> Review and Send
      </h2>
      <div className="review-grid">
        <div>
          <h3>Preview{first && variables[first] ? ` (for ${first})` : ''}</h3>
          <MessagePreview text={previewText.slice(0, LIMITS.messageMaxLength)} />
          {missing.length > 0 && (
            <p className="field-error">
              {WEB_MESSAGES.placeholderMissing} {missing.map((m) => `{{${m}}}`).join(', ')} in some recipients
            </p>
          )}
        </div>
        <div className="review-side">
          <div className="summary-box">
            <h3>Recipients</h3>
            <p>
              <strong>{numbers.length}</strong> phone number{numbers.length === 1 ? '' : 's'}
            </p>
            {hasNumbers && (
              <ul className="plain-list">
                {numbers.slice(0, LIMITS.reviewRecipientsShown).map((n) => (
                  <li key={n}>{n}</li>
                ))}
                {numbers.length > LIMITS.reviewRecipientsShown && <li className="muted">and {numbers.length - LIMITS.reviewRecipientsShown} more</li>}
              </ul>
            )}
            <p className="muted small">Estimated time: about {minutes(reviewEstimateMinutes(numbers.length))}</p>
          </div>
          <ul className="checklist" aria-label="Ready to send">
            {checklist.map((c) => (
              <li key={c.label} className={c.ok ? 'ok' : 'missing'}>
                <span aria-hidden="true">{c.ok ? '✓' : '○'}</span> {c.label}
                <span className="visually-hidden">{c.ok ? ': done' : ': not yet'}</span>
              </li>
            ))}
          </ul>
          <button type="button" className="button primary large block" disabled={!canStart} onClick={() => setConfirming(true)}>
            Start Sending
          </button>
          {!hasMessage ? (
            <p className="muted small">{MESSAGES.enterMessageFirst}</p>
          ) : !hasNumbers ? (
            <p className="muted small">{MESSAGES.addPhoneNumbersFirst}</p>
          ) : null}
        </div>
      </div>
      {confirming && (
        <ConfirmSendDialog
          message={previewText}
          numbers={numbers}
          onCancel={() => setConfirming(false)}
          onConfirm={() => {
            setConfirming(false);
            void dispatch(startSending());
          }}
        />
      )}
    </section>
  );
}

/** The send confirm (also used by a template's Use): up to 10 recipients and the 4-second estimate. */
export function ConfirmSendDialog({
  title = 'Confirm Bulk Send',
  message,
  numbers,
  onCancel,
  onConfirm,
}: {
  title?: string;
  message: string;
  numbers: readonly string[];
  onCancel: () => void;
  onConfirm: () => void;
}) {
  return (
    <Dialog
      title={title}
      onClose={onCancel}
      footer={
        <>
          <button type="button" className="button secondary" onClick={onCancel}>
            Cancel
          </button>
          <button type="button" className="button primary" onClick={onConfirm}>
            Send Messages
          </button>
        </>
      }
    >
      <p>
        Send this message to <strong>{numbers.length}</strong> recipient{numbers.length === 1 ? '' : 's'}? Estimated time:{' '}
        <strong>{minutes(estimateMinutes(numbers.length))}</strong>.
      </p>
      <MessagePreview text={message.slice(0, LIMITS.messageMaxLength)} />
      <ul className="confirm-list" aria-label="Recipients">
        {numbers.slice(0, LIMITS.confirmRecipientsShown).map((n) => (
          <li key={n}>{n}</li>
        ))}
      </ul>
      {numbers.length > LIMITS.confirmRecipientsShown && <p className="muted small">and {numbers.length - LIMITS.confirmRecipientsShown} more</p>}
    </Dialog>
  );
}
