import { Injectable } from '@nestjs/common';
import {
  CONTACT_MESSAGES,
  CONTACTS_LIMITS,
  ContactsErrorCode,
  conversationPhoneOf,
  type Conversation,
  type ThreadMessage,
} from '@bns/contracts';
import { AppError } from '@bns/service-kit';
import { ConversationsRepository } from './conversations.repository.js';

/** The inbox: replies and our messages per number, from the message events. */
@Injectable()
export class ConversationsService {
  constructor(private readonly conversations: ConversationsRepository) {}

  async list(userId: string): Promise<{ conversations: Conversation[] }> {
    return { conversations: await this.conversations.list(userId, CONTACTS_LIMITS.conversationsPageMax) };
  }

  /** Read (no unread replies) or unread again (at least one); a number with no conversation is not found. */
  async mark(userId: string, rawPhone: string, unread: boolean): Promise<{ phone: string; unread: number }> {
    const phone = this.phoneOf(rawPhone);
    const marked = await this.conversations.mark(userId, phone, unread);
    if (marked === undefined)
      throw AppError.notFound(ContactsErrorCode.NotFound, CONTACT_MESSAGES.conversationNotFound);
    return { phone, unread: marked };
  }

  private phoneOf(rawPhone: string): string {
    const phone = conversationPhoneOf(rawPhone);
    if (!phone)
      throw AppError.validation(ContactsErrorCode.InvalidConversation, CONTACT_MESSAGES.conversationPhoneInvalid);
    return phone;
  }

  async get(userId: string, rawPhone: string, markRead = true): Promise<{ messages: ThreadMessage[] }> {
    const phone = this.phoneOf(rawPhone);
    const messages = await this.conversations.thread(userId, phone, CONTACTS_LIMITS.threadMessagesMax, markRead);
    return { messages: messages ?? [] };
  }
}
