import { useId, useMemo, useState } from 'react';
import {
  estimatedUploadSeconds,
  estimateMinutes,
  CONTACT_MESSAGES,
  fallbackUses,
  fillPlaceholders,
  withFallbacks,
  MEDIA_LIMITS,
  isBlankText,
  LIMITS,
  MESSAGES,
  OPT_OUT_MESSAGES,
  placeholdersIn,
  reviewEstimateMinutes,
  WEB_MESSAGES,
} from '@bns/contracts';
import { useGetJobPacingQuery } from '../../api/api.js';
import { useAppDispatch, useAppSelector } from '../../app/hooks.js';
import { Dialog } from '../../components/Dialog.js';
import { selectIsConnected } from '../connection/slice.js';
import { startSending } from '../job/thunks.js';
import { selectJobInProgress } from '../job/slice.js';
import { selectUserId } from '../auth/slice.js';
import { whenLabel } from '../pacing/format.js';
import { useGetSendingPolicyQuery } from '../pacing/pacingApi.js';
import { ReviewPacing } from '../pacing/ReviewPacing.js';
import { selectScheduleReady, selectStartAt } from '../pacing/slice.js';
import { MessagePreview } from './MessagePreview.js';
import { firstVariation } from './variations.js';
import { toast } from '../toasts/toasts.js';
import {
  missingValuesFilled,
  missingValuesOf,
  numbersRemoved,
  selectMessage,
  selectPhoneNumbers,
  selectAttachment,
  selectRows,
  selectVariables,
  type MissingValues,
} from './slice.js';
import { OptOutsReviewNote, useSkippedRecipients } from '../optouts/OptOutsReviewNote.js';

const minutes = (n: number) => `${n} minute${n === 1 ? '' : 's'}`;

/** Step 2: the preview, the first 5 recipients, the estimate, the checklist and Start Sending. */
export function StepReview() {
  const dispatch = useAppDispatch();
  const message = useAppSelector(selectMessage);
  const numbers = useAppSelector(selectPhoneNumbers);
  const variables = useAppSelector(selectVariables);
  const rows = useAppSelector(selectRows);
  const attachment = useAppSelector(selectAttachment);
  // WhatsApp takes the file once, before the first message; later ones reuse it.
  const uploadSeconds = attachment ? estimatedUploadSeconds(attachment.size) : 0;
  const connected = useAppSelector(selectIsConnected);
  const running = useAppSelector(selectJobInProgress);
  const scheduleReady = useAppSelector(selectScheduleReady);
  /** The confirm, for everyone or (Send to the others) for the recipients that have every value. */
  const [confirming, setConfirming] = useState<'all' | 'others' | null>(null);

  const hasMessage = !isBlankText(message);
  const hasNumbers = numbers.length > 0;
  // SPEC §5: Start is disabled when the message or numbers are missing, a send runs, or WhatsApp is not
  // connected; and while "Send later" has no valid time (the pacing box says why).
  const placeholders = useMemo(() => placeholdersIn(message), [message]);
  // The recipients the server would refuse for a placeholder without a value, by their spreadsheet row.
  const missing = useMemo(
    () => missingValuesOf({ phoneNumbers: numbers, variables, rows }, placeholders),
    [placeholders, numbers, variables, rows],
  );
  const missingNames = useMemo(
    () => placeholders.filter((p) => missing.some((m) => m.names.includes(p))),
    [placeholders, missing],
  );
  const everyValue = missing.length === 0;
  // …and while a {{variable}} has no value for some recipient: the confirm must not be the first to say so.
  const canStart = hasMessage && hasNumbers && connected && !running && scheduleReady && everyValue;
  const others = useMemo(() => {
    if (confirming !== 'others') return numbers;
    const gone = new Set(missing.map((m) => m.phone));
    return numbers.filter((n) => !gone.has(n));
  }, [confirming, numbers, missing]);
  const first = numbers[0];
  // The first recipient's text with the first option of each {A|B} (the server picks one per recipient).
  const firstValues = (first && variables[first]) || {};
  const previewText = firstVariation(fillPlaceholders(withFallbacks(message, firstValues), firstValues));
  // {{name|customer}}: how many recipients get the fallback, said before the send.
  const fallbackNotes = useMemo(() => fallbackUses(message, numbers, variables), [message, numbers, variables]);

  const checklist: { ok: boolean; label: string; detail?: string }[] = [
    { ok: hasMessage, label: 'Message entered' },
    { ok: hasNumbers, label: 'Phone numbers added' },
    { ok: connected, label: 'WhatsApp connected' },
    // A personalised message: every recipient has a value for each {{variable}} it uses.
    ...(placeholders.length > 0
      ? [
          {
            ok: everyValue,
            label: WEB_MESSAGES.checkVariables,
            detail: everyValue ? undefined : WEB_MESSAGES.checkVariablesMissing(missingNames, missing.length),
          },
        ]
      : []),
  ];

  return (
    <section className="card step" aria-labelledby="step2-title">
      <h2 id="step2-title">
        <span className="step-number">2</span> Review and Send
      </h2>
      <div className="review-grid">
        <div>
          <h3>Preview{first && variables[first] ? ` (for ${first})` : ''}</h3>
          <MessagePreview text={previewText.slice(0, LIMITS.messageMaxLength)} attachment={attachment} />
          {fallbackNotes.map((f) => (
            <p key={f.name} className="muted small" data-testid="fallback-note">
              {CONTACT_MESSAGES.fallbackUsed(f.name, f.count, f.fallback)}
            </p>
          ))}
          {missing.length > 0 && (
            <MissingValuesPanel
              missing={missing}
              others={numbers.length - missing.length}
              // Nothing leaves the list until the send is confirmed: Cancel leaves the sender as it was.
              onSendToOthers={() => setConfirming('others')}
              onFill={(value) => {
                const names = [...new Set(missing.flatMap((m) => m.names))];
                dispatch(missingValuesFilled({ phones: missing.map((m) => m.phone), names, value }));
                toast.success(WEB_MESSAGES.missingValuesFilled(missing.length));
              }}
            />
          )}
        </div>
        <div className="review-side">
          <div className="summary-box">
            <h3>Recipients</h3>
            <p>
              <strong>{numbers.length.toLocaleString('en-US')}</strong> phone number{numbers.length === 1 ? '' : 's'}
            </p>
            {hasNumbers && (
              <ul className="plain-list">
                {numbers.slice(0, LIMITS.reviewRecipientsShown).map((n) => (
                  <li key={n}>{n}</li>
                ))}
                {numbers.length > LIMITS.reviewRecipientsShown && (
                  <li className="muted">
                    and {(numbers.length - LIMITS.reviewRecipientsShown).toLocaleString('en-US')} more
                  </li>
                )}
              </ul>
            )}
            <p className="muted small" data-testid="review-estimate">
              Estimated time: about {minutes(reviewEstimateMinutes(numbers.length, hasNumbers ? uploadSeconds : 0))}
              {attachment &&
                hasNumbers &&
                ` (including about ${uploadSeconds} s to upload the attachment once, at ${MEDIA_LIMITS.estimatedUploadSecondsPerMb} s per MB)`}
            </p>
          </div>
          <ReviewPacing count={numbers.length} message={message} />
          {/* opt-outs: "N recipients have opted out and will be skipped" */}
          <OptOutsReviewNote numbers={numbers} />
          <ul className="checklist" aria-label="Ready to send">
            {checklist.map((c) => (
              <li
                key={c.label}
                className={c.ok ? 'ok' : 'missing'}
                data-testid={c.label === WEB_MESSAGES.checkVariables ? 'check-variables' : undefined}
              >
                <span aria-hidden="true">{c.ok ? '✓' : c.detail ? '✗' : '○'}</span> {c.label}
                <span className="visually-hidden">{c.ok ? ': done' : ': not yet'}</span>
                {c.detail && <span className="check-detail">{c.detail}</span>}
              </li>
            ))}
          </ul>
          <button
            type="button"
            className="button primary large block"
            disabled={!canStart}
            onClick={() => setConfirming('all')}
          >
            Start Sending
          </button>
          {!hasMessage ? (
            <p className="muted small">{MESSAGES.enterMessageFirst}</p>
          ) : !hasNumbers ? (
            <p className="muted small">{MESSAGES.addPhoneNumbersFirst}</p>
          ) : !everyValue ? (
            <p className="muted small">{WEB_MESSAGES.sendBlockedMissingValues}</p>
          ) : null}
        </div>
      </div>
      {confirming && (
        <ConfirmSendDialog
          message={previewText}
          numbers={others}
          onCancel={() => setConfirming(null)}
          onConfirm={() => {
            setConfirming(null);
            if (confirming === 'others') {
              dispatch(numbersRemoved(missing.map((m) => m.phone)));
              toast.info(WEB_MESSAGES.missingValuesDropped(missing.length));
            }
            void dispatch(startSending());
          }}
        />
      )}
    </section>
  );
}

const MISSING_SHOWN = 50;

/** Rows with blank cells for the message's placeholders: send to the others, or fill in a default value. */
function MissingValuesPanel({
  missing,
  others,
  onSendToOthers,
  onFill,
}: {
  missing: readonly MissingValues[];
  others: number;
  onSendToOthers: () => void;
  onFill: (value: string) => void;
}) {
  const [value, setValue] = useState('');
  const titleId = useId();
  return (
    <div className="notice notice-warning missing-rows" role="group" aria-labelledby={titleId}>
      <strong id={titleId}>{WEB_MESSAGES.rowsMissingValuesTitle}</strong>
      <p className="small">{WEB_MESSAGES.rowsMissingValuesHint}</p>
      <ul aria-label={WEB_MESSAGES.rowsMissingValuesTitle}>
        {missing.slice(0, MISSING_SHOWN).map((m) => (
          <li key={m.phone}>
            {m.row !== undefined ? `Row ${m.row}` : `${WEB_MESSAGES.typedNumber}`} · {m.phone} ·{' '}
            {WEB_MESSAGES.placeholderMissing} {m.names.map((n) => `{{${n}}}`).join(', ')}
          </li>
        ))}
        {missing.length > MISSING_SHOWN && <li className="muted">and {missing.length - MISSING_SHOWN} more</li>}
      </ul>
      <div className="button-row">
        <button type="button" className="button secondary small" disabled={others === 0} onClick={onSendToOthers}>
          {WEB_MESSAGES.sendToOthers(others)}
        </button>
        <label className="field inline">
          <span>{WEB_MESSAGES.fillDefaultLabel}</span>
          <input value={value} onChange={(e) => setValue(e.target.value)} />
        </label>
        <button
          type="button"
          className="button secondary small"
          disabled={value.trim() === ''}
          onClick={() => onFill(value.trim())}
        >
          {WEB_MESSAGES.fillDefault}
        </button>
      </div>
    </div>
  );
}

/**
 * The send confirm (also used by a template's Use): the recipients the job will send to (up to 10
 * listed), the estimate with the server's delay, how many will be skipped, and a scheduled start.
 */
export function ConfirmSendDialog({
  title = 'Confirm Bulk Send',
  message,
  numbers,
  onCancel,
  onConfirm,
  blockedReason,
  extraAction,
}: {
  title?: string;
  message: string;
  numbers: readonly string[];
  onCancel: () => void;
  onConfirm: () => void;
  /** Why this send cannot go (Send Messages is disabled and the reason shown). */
  blockedReason?: string;
  /** A button between Cancel and Send Messages (e.g. Open in Send Messages). */
  extraAction?: { label: string; onClick: () => void };
}) {
  // The jobs service's own delay (SEND_DELAY_MS): the estimate here is the one the start answers with.
  const pacing = useGetJobPacingQuery();
  const userId = useAppSelector(selectUserId);
  // Send later: the confirm says the job is scheduled, and for when (in the account's zone too).
  const startAt = useAppSelector(selectStartAt);
  const { data: policy } = useGetSendingPolicyQuery(userId, { skip: !startAt });
  // Opted-out and not-on-WhatsApp numbers are skipped by the job: counted apart, not as recipients.
  const { sendable, optedOut, notOnWhatsApp } = useSkippedRecipients(numbers);
  const count = sendable.length;
  return (
    <Dialog
      title={title}
      onClose={onCancel}
      footer={
        <>
          <button type="button" className="button secondary" onClick={onCancel}>
            Cancel
          </button>
          {extraAction && (
            <button type="button" className="button secondary" onClick={extraAction.onClick}>
              {extraAction.label}
            </button>
          )}
          <button
            type="button"
            className="button primary"
            disabled={count === 0 || blockedReason !== undefined}
            title={blockedReason ?? (count === 0 ? 'Every recipient would be skipped' : undefined)}
            onClick={onConfirm}
          >
            Send Messages
          </button>
        </>
      }
    >
      <p>
        Send this message to <strong>{count}</strong> recipient{count === 1 ? '' : 's'}? Estimated time:{' '}
        <strong data-testid="confirm-estimate">
          {pacing.data ? minutes(estimateMinutes(count, pacing.data.sendDelayMs)) : WEB_MESSAGES.estimateUnknown}
        </strong>
        .
      </p>
      {blockedReason && (
        <p className="notice notice-warning" role="alert" data-testid="confirm-blocked">
          {blockedReason}
        </p>
      )}
      {(optedOut > 0 || notOnWhatsApp > 0) && (
        <div className="notice notice-warning" data-testid="confirm-skipped">
          {optedOut > 0 && <p>{OPT_OUT_MESSAGES.willBeSkipped(optedOut)}.</p>}
          {notOnWhatsApp > 0 && <p>{OPT_OUT_MESSAGES.notOnWhatsAppSkipped(notOnWhatsApp)}.</p>}
        </div>
      )}
      {startAt && (
        <p className="notice notice-info" data-testid="confirm-schedule">
          <strong>Scheduled:</strong> sending starts {whenLabel(startAt, policy?.timeZone)}. Until then the job waits.
        </p>
      )}
      <MessagePreview text={firstVariation(message.slice(0, LIMITS.messageMaxLength))} />
      <ul className="confirm-list" aria-label="Recipients">
        {sendable.slice(0, LIMITS.confirmRecipientsShown).map((n) => (
          <li key={n}>{n}</li>
        ))}
      </ul>
      {count > LIMITS.confirmRecipientsShown && (
        <p className="muted small">and {count - LIMITS.confirmRecipientsShown} more</p>
      )}
    </Dialog>
  );
}
