import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import type {
  JobProgressEvent,
  MessageReceivedEvent,
  MessageStatus,
  MessageStatusEvent,
  SessionStateEvent,
} from '@bns/contracts';
import { Transactions } from '@bns/service-kit';
import type { ReadModelEvent } from './event-shape.js';
import { applyMessageEvent, monthOf, type MessageState } from './message-projection.js';
import {
  ProjectionRepository,
  type MonthlyCount,
  type NewMessage,
  type StoredMessage,
  type Totals,
} from './projection.repository.js';

const ACTIVE_STATES = new Set(['ready', 'exist']);
const INACTIVE_STATES = new Set(['disconnected', 'no_session']);

/** Postgres errors worth a plain retry of the whole batch (another replica held the same rows). */
const RETRYABLE = new Set(['40P01', '40001']);
const MAX_ATTEMPTS = 5;

const keyOf = (userId: string, idempotencyKey: string) => `${userId}\u0000${idempotencyKey}`;

/**
 * Applies events to the read model, a batch per transaction. The applied-events insert, the message
 * rows, the per-user totals and the monthly usage all commit together, so an event is either wholly
 * applied (and its id recorded) or not at all, and the caller acks only after the commit.
 */
@Injectable()
export class ProjectionService {
  constructor(
    private readonly tx: Transactions,
    private readonly repo: ProjectionRepository,
  ) {}

  /** Returns how many of the events were new (not applied before). */
  async applyBatch(events: ReadModelEvent[]): Promise<number> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.tx.run((em) => this.apply(em, events));
      } catch (err) {
        if (attempt >= MAX_ATTEMPTS || !RETRYABLE.has((err as { code?: string }).code ?? '')) throw err;
      }
    }
  }

  /** Forgets event ids older than the stream can redeliver. */
  pruneAppliedEvents(olderThanDays: number): Promise<number> {
    return this.repo.pruneAppliedEvents(olderThanDays);
  }

  private async apply(em: EntityManager, all: ReadModelEvent[]): Promise<number> {
    // A job's skipped count only grows and is stored as the largest seen: applying one again changes
    // nothing, so these need no applied-event row (one per progress event would be a write per send).
    const progress = all.flatMap((e) => (e.subject === 'events.job.progress' ? [e.event] : []));
    const events = progress.length === 0 ? all : all.filter((e) => e.subject !== 'events.job.progress');
    if (progress.length > 0) await this.applyProgress(em, progress);
    if (events.length === 0) return progress.length;
    const fresh = await this.repo.markApplied(em, [...new Set(events.map((e) => e.event.eventId))]);
    const messages: MessageStatusEvent[] = [];
    const received: MessageReceivedEvent[] = [];
    const sessions: SessionStateEvent[] = [];
    for (const e of events) {
      // Also drops a second copy inside the same batch.
      if (!fresh.delete(e.event.eventId)) continue;
      if (e.subject === 'events.message.status') messages.push(e.event);
      else if (e.subject === 'events.message.received') received.push(e.event);
      else if (e.subject === 'events.session.state') sessions.push(e.event);
    }
    // Conversation locks first and all at once, in one order (see lockConversations).
    await this.repo.lockConversations(em, [
      ...messages.filter((e) => e.recipient !== '').map((e) => ({ userId: e.userId, number: e.recipient })),
      ...received.map((e) => ({ userId: e.userId, number: e.from })),
    ]);
    if (messages.length > 0) await this.applyMessages(em, messages);
    if (received.length > 0) await this.applyReceived(em, received);
    for (const e of sessions) await this.applySession(em, e);
    return messages.length + received.length + sessions.length + progress.length;
  }

  /** Jobs' counts of skipped recipients (opted out, not on WhatsApp), for the dashboard's figures. */
  private async applyProgress(em: EntityManager, events: JobProgressEvent[]): Promise<void> {
    await this.repo.recordSkips(
      em,
      events
        .filter((e) => (e.progress.skipped ?? 0) > 0)
        .map((e) => ({
          userId: e.userId,
          jobId: e.jobId,
          month: monthOf(new Date(e.at)),
          skipped: e.progress.skipped!,
        })),
    );
  }

  /**
   * Stores what recipients wrote and marks the message each one answers as replied; a message counts
   * once in the replies however often its recipient writes back. Oldest first, so the first answer is
   * the one a message keeps.
   */
  private async applyReceived(em: EntityManager, events: MessageReceivedEvent[]): Promise<void> {
    const replied: string[] = [];
    for (const e of [...events].sort((a, b) => Date.parse(a.at) - Date.parse(b.at))) {
      const outcome = await this.repo.recordInbound(em, {
        userId: e.userId,
        messageId: e.messageId,
        from: e.from,
        text: e.text,
        at: e.at,
      });
      if (outcome === 'first-answer') replied.push(e.userId);
    }
    await this.repo.addReplied(em, replied);
  }

  private async applyMessages(em: EntityManager, events: MessageStatusEvent[]): Promise<void> {
    const firstByKey = new Map<string, MessageStatusEvent>();
    for (const e of events)
      if (!firstByKey.has(keyOf(e.userId, e.idempotencyKey))) firstByKey.set(keyOf(e.userId, e.idempotencyKey), e);
    // A fixed order of row locks, so two replicas applying overlapping batches cannot deadlock.
    const firsts = [...firstByKey.values()].sort((a, b) =>
      keyOf(a.userId, a.idempotencyKey) < keyOf(b.userId, b.idempotencyKey) ? -1 : 1,
    );

    const placeholders: NewMessage[] = firsts.map((e) => ({
      userId: e.userId,
      idempotencyKey: e.idempotencyKey,
      jobId: e.jobId,
      recipient: e.recipient,
      content: e.content,
      at: e.at,
    }));
    const inserted = new Set(
      (await this.repo.insertPlaceholders(em, placeholders)).map((k) => keyOf(k.userId, k.idempotencyKey)),
    );
    const stored = await this.repo.lockMessages(em, firsts);

    // A placeholder stands for "not seen before": the fold starts from nothing.
    const states = new Map<string, MessageState | undefined>();
    for (const m of stored) {
      const key = keyOf(m.userId, m.idempotencyKey);
      states.set(key, inserted.has(key) ? undefined : m.state);
    }
    const before = new Map(states);
    const monthly = new Map<string, MonthlyCount>();
    for (const e of events) {
      const key = keyOf(e.userId, e.idempotencyKey);
      const step = applyMessageEvent(states.get(key), e);
      states.set(key, step.next);
      if (step.counted) {
        const mk = `${e.userId}\u0000${step.counted.month}`;
        const m = monthly.get(mk) ?? { userId: e.userId, month: step.counted.month, sent: 0, failed: 0 };
        m[step.counted.outcome] += 1;
        if (step.counted.moved) m.sent -= 1;
        monthly.set(mk, m);
      }
    }

    const totals = new Map<string, Totals>();
    const bump = (userId: string, status: MessageStatus, by: number) => {
      const t = totals.get(userId) ?? { pending: 0, sent: 0, failed: 0, delivered: 0, read: 0 };
      t[status] += by;
      totals.set(userId, t);
    };
    const changed: StoredMessage[] = [];
    for (const e of firsts) {
      const key = keyOf(e.userId, e.idempotencyKey);
      const prev = before.get(key);
      const next = states.get(key)!;
      if (prev?.status !== next.status) {
        if (prev) bump(e.userId, prev.status, -1);
        bump(e.userId, next.status, 1);
      }
      changed.push({ userId: e.userId, idempotencyKey: e.idempotencyKey, state: next });
    }

    await this.repo.saveMessages(em, changed);
    await this.repo.addTotals(em, totals);
    await this.repo.addMonthlyUsage(em, [...monthly.values()]);
    // An answer can be applied before the send it answers (they come through different consumers).
    await this.repo.addReplied(em, await this.repo.matchWaitingAnswers(em, firsts));
  }

  /**
   * One WhatsApp link per user: ready/exist make the event's session the active one, disconnected and
   * no_session end it. Other states (qr, creating, ...) say nothing about an existing link.
   */
  private async applySession(em: EntityManager, e: SessionStateEvent): Promise<void> {
    const active = ACTIVE_STATES.has(e.state);
    if (!active && !INACTIVE_STATES.has(e.state)) return;
    // An older state arriving late: the newer one already stands.
    if (!(await this.repo.recordLinkState(em, e.userId, e.state, e.at))) return;

    const sessionId = e.sessionId ?? e.userId;
    await this.repo.endSessions(em, e.userId, active ? sessionId : null, e.at);
    if (active) await this.repo.activateSession(em, e.userId, sessionId, e.phoneNumber ?? null, e.at);
  }
}
