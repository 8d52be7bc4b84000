import type { ReactNode } from 'react';
import { formatFileSize } from '@bns/contracts';
import { KIND_WORDS } from './AttachmentPicker.js';
import { formatMessage, type FormatNode } from './format.js';
import type { Attachment } from './slice.js';

function render(nodes: FormatNode[], prefix = ''): ReactNode[] {
  return nodes.map((n, i) => {
    const key = `${prefix}${i}`;
    if (typeof n === 'string') return n;
    if (n.kind === 'link')
      return (
        <a key={key} href={n.href} target="_blank" rel="noopener noreferrer">
          {n.text}
        </a>
      );
    return n.kind === 'bold' ? (
      <strong key={key}>{render(n.children, `${key}.`)}</strong>
    ) : (
      <em key={key}>{render(n.children, `${key}.`)}</em>
    );
  });
}

/**
 * The message as the recipient's phone shows it (line breaks kept by CSS). With an attachment, as
 * WhatsApp shows one: an image above its caption, a video or sound as its player's place, a document
 * as a chip with its name and size; the text is the caption.
 */
export function MessagePreview({
  text,
  label = 'Message preview',
  attachment,
}: {
  text: string;
  label?: string;
  attachment?: Attachment | null;
}) {
  return (
    <div className={`message-bubble ${attachment ? 'with-media' : ''}`} aria-label={label}>
      {attachment &&
        (attachment.kind === 'image' && attachment.previewUrl ? (
          <img className="bubble-image" src={attachment.previewUrl} alt={attachment.fileName} />
        ) : (
          <div className={`bubble-file bubble-${attachment.kind}`} data-testid="bubble-file">
            <span aria-hidden="true">
              {attachment.kind === 'document'
                ? '📄'
                : attachment.kind === 'image'
                  ? '🖼'
                  : attachment.kind === 'video'
                    ? '🎬'
                    : '🎵'}
            </span>
            <span className="bubble-file-text">
              <strong>{attachment.fileName}</strong>
              <span className="small">
                {KIND_WORDS[attachment.kind]} · {formatFileSize(attachment.size)}
              </span>
            </span>
          </div>
        ))}
      {text.trim() === '' ? (
        attachment ? null : (
          <span className="muted">Your message will appear here</span>
        )
      ) : (
        <div className="bubble-caption">{render(formatMessage(text))}</div>
      )}
    </div>
  );
}
