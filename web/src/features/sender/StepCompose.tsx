import { useId, useState } from 'react';
import { CHIPS_SHOWN, LIMITS, MESSAGES, WEB_MESSAGES } from '@bns/contracts';
import { useAppDispatch, useAppSelector } from '../../app/hooks.js';
import { ChooseContacts } from '../contacts/ChooseContacts.js';
import { FileImport } from '../personalise/FileImport.js';
import { toast } from '../toasts/toasts.js';
import { AttachmentPicker } from './AttachmentPicker.js';
import { PhoneSpreadsheetDialog } from './PhoneSpreadsheetDialog.js';
import {
  messageChanged,
  numberRemoved,
  numbersAdded,
  numbersCleared,
  selectMessage,
  selectPhoneNumbers,
  selectVariables,
} from './slice.js';

/** Step 1: the message (with its count) and the recipients (chips, Clear All, the spreadsheet dialog, a file). */
export function StepCompose() {
  const dispatch = useAppDispatch();
  const message = useAppSelector(selectMessage);
  const numbers = useAppSelector(selectPhoneNumbers);
  const variables = useAppSelector(selectVariables);
  const [sheetOpen, setSheetOpen] = useState(false);
  const messageId = useId();
  const over = message.length > LIMITS.messageMaxLength;

  return (
    <section className="card step" aria-labelledby="step1-title">
      <h2 id="step1-title">
        <span className="step-number">1</span> Create message and add contacts
      </h2>

      <AttachmentPicker>
        <div className="field">
          <label htmlFor={messageId}>Message</label>
          <textarea
            id={messageId}
            rows={6}
            value={message}
            placeholder="Type your message. Use *bold*, _italic_ and {{name}} for a value from your file."
            aria-describedby={`${messageId}-count`}
            onChange={(e) => dispatch(messageChanged(e.target.value))}
          />
          <div id={`${messageId}-count`} className={`char-count ${over ? 'over' : ''}`} aria-live="polite">
            {message.length}/{LIMITS.messageMaxLength} characters
            {over && ` (only the first ${LIMITS.messageMaxLength} are sent)`}
          </div>
        </div>
      </AttachmentPicker>

      <div className="recipients-head">
        <h3>
          Phone numbers <span className="count-badge">{numbers.length.toLocaleString('en-US')}</span>
        </h3>
        <div className="button-row">
          <button type="button" className="button primary small" onClick={() => setSheetOpen(true)}>
            Add Phone Numbers
          </button>
          <button
            type="button"
            className="button secondary small"
            disabled={numbers.length === 0}
            onClick={() => dispatch(numbersCleared())}
          >
            Clear All
          </button>
          <ChooseContacts />
        </div>
      </div>
      {numbers.length === 0 ? (
        <p className="muted small">{MESSAGES.addPhoneNumbersFirst}</p>
      ) : (
        <ul className="chips" aria-label="Phone numbers">
          {numbers.slice(0, CHIPS_SHOWN).map((n) => (
            <li
              key={n}
              className="chip"
              title={
                variables[n]
                  ? Object.entries(variables[n])
                      .map(([k, v]) => `${k}: ${v}`)
                      .join(', ')
                  : undefined
              }
            >
              <span>{n}</span>
              {variables[n]?.name && <span className="chip-name">{variables[n].name}</span>}
              <button type="button" aria-label={`Remove ${n}`} onClick={() => dispatch(numberRemoved(n))}>
                ×
              </button>
            </li>
          ))}
          {numbers.length > CHIPS_SHOWN && (
            <li className="chip chip-more">and {(numbers.length - CHIPS_SHOWN).toLocaleString('en-US')} more</li>
          )}
        </ul>
      )}

      <FileImport />

      {sheetOpen && (
        <PhoneSpreadsheetDialog
          existing={numbers}
          onClose={() => setSheetOpen(false)}
          onAdd={(r) => {
            dispatch(numbersAdded(r.valid));
            setSheetOpen(false);
            const notes = [
              r.invalid.length ? `${r.invalid.length} invalid skipped` : '',
              r.duplicates ? `${r.duplicates} duplicate${r.duplicates === 1 ? '' : 's'} merged` : '',
            ].filter(Boolean);
            toast.success(
              `${WEB_MESSAGES.numbersAdded}: ${r.valid.length}${notes.length ? ` (${notes.join(', ')})` : ''}`,
            );
          }}
        />
      )}
    </section>
  );
}
