import { useRef, useState, type FormEvent } from 'react';
import {
  formatFileSize,
  LIMITS,
  MEDIA_LIMITS,
  MEDIA_MESSAGES,
  MESSAGES,
  TEMPLATE_CATEGORIES,
  validateTemplateCreate,
  type Template,
  type TemplateCategory,
  type TemplateFieldErrors,
  type TemplateInput,
} from '@bns/contracts';
import { useGetMediaQuery, useUploadMediaMutation } from '../../api/api.js';
import { errorMessage, httpStatus, isNetworkError } from '../../api/errors.js';
import { Dialog } from '../../components/Dialog.js';
import { KIND_WORDS } from '../sender/AttachmentPicker.js';
import { toast } from '../toasts/toasts.js';

/**
 * The template's attachment (sent with its message as the caption): its name, kind and size, Attach
 * file to add or replace it (uploaded at once, refused in the server's words) and Remove.
 */
function TemplateAttachmentField({
  mediaId,
  onChange,
}: {
  mediaId: string | null;
  onChange: (mediaId: string | null) => void;
}) {
  const { data: media, isError } = useGetMediaQuery(mediaId ?? '', { skip: mediaId === null });
  const [upload, { isLoading }] = useUploadMediaMutation();
  const [error, setError] = useState<string | null>(null);
  const input = useRef<HTMLInputElement>(null);
  const choose = async (file: File | undefined) => {
    if (!file) return;
    setError(null);
    if (file.size > MEDIA_LIMITS.maxUploadBytes) return setError(MEDIA_MESSAGES.uploadTooLarge);
    try {
      onChange((await upload(file).unwrap()).mediaId);
    } catch (e) {
      setError(isNetworkError(e) || httpStatus(e) === 503 ? MEDIA_MESSAGES.uploadFailed : errorMessage(e));
    } finally {
      if (input.current) input.current.value = '';
    }
  };
  return (
    <div className="field">
      <span>Attachment (optional)</span>
      {mediaId !== null && (
        <div className="attachment-chip" data-testid="template-attachment">
          <span className="attachment-text">
            <span className="attachment-name">
              {media ? media.fileName : isError ? MEDIA_MESSAGES.attachmentMissing : 'Loading…'}
            </span>
            {media && (
              <span className="muted small">
                {KIND_WORDS[media.kind]} · {formatFileSize(media.size)}
              </span>
            )}
          </span>
          <button type="button" className="button link small" onClick={() => onChange(null)}>
            Remove
          </button>
        </div>
      )}
      <div className="attachment-row">
        <button
          type="button"
          className="button secondary small"
          disabled={isLoading}
          onClick={() => input.current?.click()}
        >
          📎 {mediaId === null ? 'Attach file' : 'Replace file'}
        </button>
        <input
          ref={input}
          type="file"
          hidden
          aria-label="Template attachment"
          onChange={(e) => void choose(e.target.files?.[0])}
        />
        {isLoading && <span className="muted small">{MEDIA_MESSAGES.uploading}</span>}
      </div>
      <span className="hint">{MEDIA_MESSAGES.limitsHint}</span>
      {error && (
        <span className="field-error" role="alert">
          {error}
        </span>
      )}
    </div>
  );
}

/** Phone numbers as typed: one per line, or separated by commas, semicolons or spaces. */
export function splitNumbers(text: string): string[] {
  return text
    .split(/[\n,;]+/)
    .map((s) => s.trim())
    .filter((s) => s !== '');
}

const titleCase = (c: string) => c[0]!.toUpperCase() + c.slice(1);

/** Create or edit a template with the SPEC §5 rules and messages (shared with the server). */
export function TemplateFormDialog({
  template,
  serverErrors,
  busy,
  onSubmit,
  onClose,
}: {
  template: Template | null;
  serverErrors?: TemplateFieldErrors;
  busy: boolean;
  onSubmit: (input: TemplateInput) => void;
  onClose: () => void;
}) {
  const [name, setName] = useState(template?.name ?? '');
  const [description, setDescription] = useState(template?.description ?? '');
  const [message, setMessage] = useState(template?.message_content ?? '');
  const [numbers, setNumbers] = useState((template?.phone_numbers ?? []).join('\n'));
  const [category, setCategory] = useState<TemplateCategory>(template?.category ?? 'general');
  const [favorite, setFavorite] = useState(template?.is_favorite ?? false);
  // Kept as it is unless the user changes it: a save never drops the template's attachment by itself.
  const [mediaId, setMediaId] = useState<string | null>(template?.mediaId ?? null);
  const [errors, setErrors] = useState<TemplateFieldErrors>({});
  const shown = { ...serverErrors, ...errors };

  const submit = (e: FormEvent) => {
    e.preventDefault();
    const result = validateTemplateCreate({
      name,
      description,
      message_content: message,
      phone_numbers: splitNumbers(numbers),
      category,
      is_favorite: favorite,
      mediaId,
    });
    if (!result.ok) {
      // The rule names the bad numbers itself ("Invalid phone numbers: …"), as the server answers.
      setErrors(result.errors);
      toast.error(MESSAGES.fixFormErrors);
      return;
    }
    setErrors({});
    onSubmit(result.value);
  };

  const err = (field: keyof TemplateFieldErrors) =>
    shown[field] ? (
      <span className="field-error" id={`tf-${field}-error`} role="alert">
        {shown[field]}
      </span>
    ) : null;
  const described = (field: keyof TemplateFieldErrors) =>
    shown[field] ? { 'aria-invalid': true, 'aria-describedby': `tf-${field}-error` } : {};
  const count = splitNumbers(numbers).length;

  return (
    <Dialog title={template ? 'Edit Template' : 'Create Template'} size="large" onClose={onClose}>
      <form className="form" onSubmit={submit} noValidate>
        <label className="field">
          <span>Template name</span>
          <input value={name} onChange={(e) => setName(e.target.value)} {...described('name')} />
          <span className="hint">
            {name.length}/{LIMITS.templateNameMax}
          </span>
          {err('name')}
        </label>
        <label className="field">
          <span>Description (optional)</span>
          <input value={description} onChange={(e) => setDescription(e.target.value)} {...described('description')} />
          <span className="hint">
            {description.length}/{LIMITS.templateDescriptionMax}
          </span>
          {err('description')}
        </label>
        <label className="field">
          <span>Message content</span>
          <textarea
            rows={5}
            value={message}
            onChange={(e) => setMessage(e.target.value)}
            {...described('message_content')}
          />
          <span className="hint">
            {message.length}/{LIMITS.templateMessageMax}
          </span>
          {err('message_content')}
        </label>
        <TemplateAttachmentField mediaId={mediaId} onChange={setMediaId} />
        <div className="form-row">
          <label className="field">
            <span>Category</span>
            <select value={category} onChange={(e) => setCategory(e.target.value as TemplateCategory)}>
              {TEMPLATE_CATEGORIES.map((c) => (
                <option key={c} value={c}>
                  {titleCase(c)}
                </option>
              ))}
            </select>
          </label>
          <label className="inline-check">
            <input type="checkbox" checked={favorite} onChange={(e) => setFavorite(e.target.checked)} />
            <span>Favorite</span>
          </label>
        </div>
        <label className="field">
          <span>
            Phone numbers (one per line, {LIMITS.templatePhoneMinDigits}–{LIMITS.templatePhoneMaxDigits} digits, up to{' '}
            {LIMITS.templatePhoneNumbersMax})
          </span>
          <textarea
            rows={4}
            value={numbers}
            onChange={(e) => setNumbers(e.target.value)}
            {...described('phone_numbers')}
          />
          <span className="hint">{count} numbers</span>
          {err('phone_numbers')}
        </label>
        <div className="dialog-actions">
          <button type="button" className="button secondary" onClick={onClose}>
            Cancel
          </button>
          <button type="submit" className="button primary" disabled={busy}>
            {busy ? 'Saving…' : template ? 'Save Changes' : 'Create Template'}
          </button>
        </div>
      </form>
    </Dialog>
  );
}
