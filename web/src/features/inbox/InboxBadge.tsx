import { useUnreadConversations } from './InboxTab.js';

/** The Inbox tab's live badge: conversations with unread replies (refreshed on the socket's message_received). */
export function InboxBadge() {
  const unread = useUnreadConversations();
  return unread > 0 ? (
    <span className="badge" aria-label={`${unread} unread conversations`}>
      {unread}
    </span>
  ) : null;
}
