import { useEffect, useId, useRef, useState, type DragEvent, type ReactNode } from 'react';
import { formatFileSize, MEDIA_LIMITS, MEDIA_MESSAGES, type MediaKind } from '@bns/contracts';
import { useUploadMediaMutation } from '../../api/api.js';
import { errorMessage, httpStatus, isNetworkError } from '../../api/errors.js';
import { useAppDispatch, useAppSelector } from '../../app/hooks.js';
import { attachmentRemoved, attachmentSet, selectAttachment, type Attachment } from './slice.js';

export const KIND_WORDS: Record<MediaKind, string> = {
  image: 'Image',
  video: 'Video',
  audio: 'Sound',
  document: 'Document',
};
const KIND_ICONS: Record<MediaKind, string> = { image: '🖼', video: '🎬', audio: '🎵', document: '📄' };

/** The attachment as a chip: a thumbnail for an image (when the picture is at hand), else its kind's icon. */
export function AttachmentChip({ attachment, children }: { attachment: Attachment; children?: ReactNode }) {
  return (
    <div className="attachment-chip" data-testid="attachment-chip">
      {attachment.kind === 'image' && attachment.previewUrl ? (
        <img className="attachment-thumb" src={attachment.previewUrl} alt="" />
      ) : (
        <span className="attachment-icon" aria-hidden="true">
          {KIND_ICONS[attachment.kind]}
        </span>
      )}
      <span className="attachment-text">
        <span className="attachment-name">{attachment.fileName}</span>
        <span className="muted small">
          {KIND_WORDS[attachment.kind]} · {formatFileSize(attachment.size)}
        </span>
      </span>
      {children}
    </div>
  );
}

/**
 * "Attach file" beside the message, or a file dropped on it: uploaded at once (the server reads its
 * type from its bytes and says in words why it cannot be sent), then shown with its kind, name and size
 * and a thumbnail for an image; Remove takes it off. One attachment per message: the message is its caption.
 */
export function AttachmentPicker({ children }: { children: ReactNode }) {
  const dispatch = useAppDispatch();
  const attachment = useAppSelector(selectAttachment);
  return (
    <AttachmentField
      attachment={attachment}
      onChange={(next) => dispatch(next ? attachmentSet(next) : attachmentRemoved())}
    >
      {children}
    </AttachmentField>
  );
}

/** The attachment control itself, its value held by the caller (Compose's slice, an inbox answer's state). */
export function AttachmentField({
  attachment,
  onChange,
  children,
}: {
  attachment: Attachment | null | undefined;
  onChange: (attachment: Attachment | null) => void;
  children?: ReactNode;
}) {
  const [upload, { isLoading }] = useUploadMediaMutation();
  const [error, setError] = useState<string | null>(null);
  const [dragging, setDragging] = useState(false);
  const input = useRef<HTMLInputElement>(null);
  const hintId = useId();

  // A thumbnail's object URL is let go once the attachment is replaced or removed.
  useEffect(() => {
    const url = attachment?.previewUrl;
    return () => {
      if (url) URL.revokeObjectURL(url);
    };
  }, [attachment?.previewUrl]);

  const choose = async (file: File | undefined) => {
    if (!file || isLoading) return;
    setError(null);
    // Larger than any kind allows: said at once, nothing is sent.
    if (file.size > MEDIA_LIMITS.maxUploadBytes) return setError(MEDIA_MESSAGES.uploadTooLarge);
    try {
      const media = await upload(file).unwrap();
      onChange({
        mediaId: media.mediaId,
        kind: media.kind,
        fileName: media.fileName,
        size: media.size,
        ...(media.kind === 'image' && typeof URL.createObjectURL === 'function'
          ? { previewUrl: URL.createObjectURL(file) }
          : {}),
      });
    } catch (e) {
      setError(isNetworkError(e) || httpStatus(e) === 503 ? MEDIA_MESSAGES.uploadFailed : errorMessage(e));
    } finally {
      if (input.current) input.current.value = '';
    }
  };

  const onDrop = (e: DragEvent) => {
    if (!e.dataTransfer?.files?.length) return;
    e.preventDefault();
    setDragging(false);
    void choose(e.dataTransfer.files[0]);
  };

  return (
    <div
      className={`attachment-drop ${dragging ? 'dragging' : ''}`}
      data-testid="attachment-drop"
      onDragOver={(e) => {
        if (!e.dataTransfer?.types?.includes('Files')) return;
        e.preventDefault();
        setDragging(true);
      }}
      onDragLeave={() => setDragging(false)}
      onDrop={onDrop}
    >
      {children}
      <div className="attachment-row">
        <button
          type="button"
          className="button secondary small"
          aria-describedby={hintId}
          disabled={isLoading}
          onClick={() => input.current?.click()}
        >
          📎 {attachment ? 'Replace file' : 'Attach file'}
        </button>
        <input
          ref={input}
          type="file"
          hidden
          data-testid="attachment-input"
          onChange={(e) => void choose(e.target.files?.[0])}
        />
        {isLoading && (
          <span className="muted small" role="status">
            {MEDIA_MESSAGES.uploading}
          </span>
        )}
      </div>
      <p id={hintId} className="muted small">
        {MEDIA_MESSAGES.limitsHint} You can also drop a file here.
      </p>
      {error && (
        <p className="field-error" role="alert">
          {error}
        </p>
      )}
      {attachment && (
        <AttachmentChip attachment={attachment}>
          <button
            type="button"
            className="button link small"
            aria-label={`Remove ${attachment.fileName}`}
            onClick={() => onChange(null)}
          >
            Remove
          </button>
        </AttachmentChip>
      )}
    </div>
  );
}
