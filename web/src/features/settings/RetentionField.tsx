import { useId, useState } from 'react';
import { ACCOUNT_LIMITS, ACCOUNT_MESSAGES, type Retention } from '@bns/contracts';
import { errorMessage } from '../../api/errors.js';
import { useGetRetentionQuery, useSetRetentionMutation } from './accountApi.js';

const FOREVER = 'forever';

/** How long finished campaigns keep their details: 30, 90 or 365 days, or until the user deletes them. */
export function RetentionField() {
  const id = useId();
  const current = useGetRetentionQuery();
  const [save, saving] = useSetRetentionMutation();
  const [saved, setSaved] = useState(false);
  const value = current.data ? (current.data.days === null ? FOREVER : String(current.data.days)) : '';
  return (
    <div className="field">
      <label htmlFor={id}>{ACCOUNT_MESSAGES.retentionLabel}</label>
      <select
        id={id}
        data-testid="retention-select"
        value={value}
        disabled={!current.data || saving.isLoading}
        onChange={(e) => {
          const days: Retention['days'] = e.target.value === FOREVER ? null : (Number(e.target.value) as 30 | 90 | 365);
          setSaved(false);
          void save(days)
            .unwrap()
            .then(() => setSaved(true))
            .catch(() => undefined);
        }}
      >
        {ACCOUNT_LIMITS.retentionDays.map((d) => (
          <option key={d} value={String(d)}>
            {d} days
          </option>
        ))}
        <option value={FOREVER}>{ACCOUNT_MESSAGES.retentionForever}</option>
      </select>
      <span className="muted small">{ACCOUNT_MESSAGES.retentionHint}</span>
      {saved && (
        <span className="muted small" role="status">
          {ACCOUNT_MESSAGES.retentionSaved}
        </span>
      )}
      {(current.error || saving.error) && (
        <p className="field-error" role="alert">
          {errorMessage(current.error ?? saving.error)}
        </p>
      )}
    </div>
  );
}
