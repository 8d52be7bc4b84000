import { useState, type FormEvent } from 'react';
import { errorMessage } from '../../api/errors.js';
import { toast } from '../toasts/toasts.js';
import {
  useAnswerMutation,
  useGetConversationsQuery,
  useGetThreadQuery,
  useMarkConversationMutation,
} from '../contacts/contactsApi.js';
import { AttachmentField } from '../sender/AttachmentPicker.js';
import type { Attachment } from '../sender/slice.js';

function Thread({ phone, onClose }: { phone: string; onClose: () => void }) {
  const { data: messages = [], isLoading } = useGetThreadQuery(phone);
  const [answer, { isLoading: sending }] = useAnswerMutation();
  const [mark] = useMarkConversationMutation();
  // Closed first: an open thread is read again by its next fetch (opening a thread marks it read).
  const markUnread = async () => {
    onClose();
    try {
      await mark({ phone, unread: true }).unwrap();
    } catch (err) {
      toast.error(errorMessage(err));
    }
  };
  const [text, setText] = useState('');
  const [attachment, setAttachment] = useState<Attachment | null>(null);
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    try {
      await answer({ phone, text, ...(attachment ? { mediaId: attachment.mediaId } : {}) }).unwrap();
      setText('');
      setAttachment(null);
    } catch (err) {
      toast.error(errorMessage(err));
    }
  };
  return (
    <section className="card inbox-thread" aria-label={`Conversation with ${phone}`}>
      <div className="inbox-thread-head">
        <h3>{phone}</h3>
        <button type="button" className="button link small" onClick={() => void markUnread()}>
          Mark unread
        </button>
      </div>
      {isLoading && <p>Loading…</p>}
      <ol className="inbox-messages">
        {messages.map((m, i) => (
          <li key={i} className={`inbox-message inbox-${m.direction}`}>
            <span>{m.text}</span>{' '}
            <small>
              {new Date(m.at).toLocaleString()}
              {m.status ? ` · ${m.status}` : ''}
            </small>
          </li>
        ))}
      </ol>
      <form onSubmit={(e) => void submit(e)}>
        <AttachmentField attachment={attachment} onChange={setAttachment}>
          <textarea
            aria-label="Answer"
            rows={2}
            maxLength={1000}
            value={text}
            onChange={(e) => setText(e.target.value)}
          />
        </AttachmentField>
        <button type="submit" className="button secondary small" disabled={sending || text.trim() === ''}>
          Send answer
        </button>
      </form>
    </section>
  );
}

/** The number of conversations with unread replies (the tab's badge). */
export function useUnreadConversations(): number {
  const { data = [] } = useGetConversationsQuery();
  return data.filter((c) => c.unread > 0).length;
}

/** Inbox: conversations with unread replies first; a thread and an answer box. */
export function InboxTab() {
  const { data: conversations = [], error } = useGetConversationsQuery();
  const [open, setOpen] = useState<string | null>(null);
  return (
    <div className="inbox-tab">
      <section className="card" aria-label="Conversations">
        <h3>Inbox</h3>
        {error && <p className="notice notice-error">{errorMessage(error)}</p>}
        {conversations.length === 0 && <p>No replies yet.</p>}
        <ul className="inbox-list">
          {conversations.map((c) => (
            <li key={c.phone}>
              <button type="button" className={c.unread > 0 ? 'inbox-unread' : ''} onClick={() => setOpen(c.phone)}>
                <strong>{c.name ?? c.phone}</strong> {c.unread > 0 && <span className="badge">{c.unread}</span>} —{' '}
                {c.lastMessage.text.slice(0, 80)} <small>{new Date(c.lastMessage.at).toLocaleString()}</small>
              </button>
            </li>
          ))}
        </ul>
      </section>
      {open && <Thread key={open} phone={open} onClose={() => setOpen(null)} />}
    </div>
  );
}
