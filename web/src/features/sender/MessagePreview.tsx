import type { ReactNode } from 'react';
import { formatMessage, type FormatNode } from './format.js';

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

/** The message as the recipient's phone shows it (line breaks kept by CSS). */
export function MessagePreview({ text, label = 'Message preview' }: { text: string; label?: string }) {
  return (
    <div className="message-bubble" aria-label={label}>
      {text.trim() === '' ? <span className="muted">Your message will appear here</span> : render(formatMessage(text))}
    </div>
  );
}
