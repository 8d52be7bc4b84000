import { Injectable } from '@nestjs/common';
import type { Conversation, ThreadMessage } from '@bns/contracts';
import { rows, Transactions } from '@bns/service-kit';

/** The inbox's queries: conversations (one per number) and their messages, bounded by the owner's id. */
@Injectable()
export class ConversationsRepository {
  constructor(private readonly tx: Transactions) {}

  /** Conversations in which the number wrote to us: unread first, then the latest. */
  async list(userId: string, limit: number): Promise<Conversation[]> {
    const found = await rows<{
      phone: string;
      name: string | null;
      last_direction: 'in' | 'out';
      last_text: string;
      last_at: Date;
      unread: number;
      last_job_id: string | null;
    }>(
      this.tx.manager,
      `SELECT v.phone, c.name, v.last_direction, v.last_text, v.last_at, v.unread, v.last_job_id
         FROM conversations v LEFT JOIN contacts c ON c.user_id = v.user_id AND c.phone = v.phone
        WHERE v.user_id = $1 AND v.last_in_at IS NOT NULL
        ORDER BY (v.unread > 0) DESC, v.last_at DESC LIMIT $2`,
      [userId, limit],
    );
    return found.map((r) => ({
      phone: r.phone,
      ...(r.name ? { name: r.name } : {}),
      lastMessage: { direction: r.last_direction, text: r.last_text, at: r.last_at.toISOString() },
      unread: r.unread,
      ...(r.last_job_id ? { jobId: r.last_job_id } : {}),
    }));
  }

  /** Sets the unread count (0, or at least 1 when marked unread); undefined when there is no conversation. */
  async mark(userId: string, phone: string, unread: boolean): Promise<number | undefined> {
    const [found] = await rows<{ unread: number }>(
      this.tx.manager,
      `UPDATE conversations SET unread = CASE WHEN $3 THEN greatest(unread, 1) ELSE 0 END
        WHERE user_id = $1 AND phone = $2 RETURNING unread`,
      [userId, phone, unread],
    );
    return found?.unread;
  }

  /** The newest `limit` messages, oldest first, and the thread marked read (unless told not to); undefined when there is none. */
  thread(userId: string, phone: string, limit: number, markRead = true): Promise<ThreadMessage[] | undefined> {
    return this.tx.run(async (em) => {
      const marked = await rows(
        em,
        markRead
          ? `UPDATE conversations SET unread = 0 WHERE user_id = $1 AND phone = $2 RETURNING phone`
          : `SELECT phone FROM conversations WHERE user_id = $1 AND phone = $2`,
        [userId, phone],
      );
      if (marked.length === 0) return undefined;
      const found = await rows<{
        direction: 'in' | 'out';
        text: string;
        at: Date;
        status: string | null;
        job_id: string | null;
      }>(
        em,
        `SELECT direction, text, at, status, job_id FROM (
           SELECT id, direction, text, at, status, job_id FROM messages
            WHERE user_id = $1 AND phone = $2 ORDER BY at DESC, id DESC LIMIT $3) m
          ORDER BY at, id`,
        [userId, phone, limit],
      );
      return found.map((r) => ({
        direction: r.direction,
        text: r.text,
        at: r.at.toISOString(),
        ...(r.status ? { status: r.status } : {}),
        ...(r.job_id ? { jobId: r.job_id } : {}),
      }));
    });
  }
}
