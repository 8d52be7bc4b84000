import { randomUUID } from 'node:crypto';
import {
  Inject,
  Injectable,
  Logger,
  type BeforeApplicationShutdown,
  type OnApplicationBootstrap,
} from '@nestjs/common';
import {
  ACCOUNT_DATA_OWNERS,
  ACCOUNT_MESSAGES,
  AccountErrorCode,
  RETENTION_DEFAULT,
  type DeletionStarted,
  type DeletionStatus,
  type Retention,
  type RetentionPage,
  type UserDeletionReceiptEvent,
} from '@bns/contracts';
import { AppError, EventBus, userKeyOf, UserDeletions } from '@bns/service-kit';
import { CLOCK, type Clock } from '../clock/clock.js';
import { AccountDeletionsRepository, type DeletionRow } from './account-deletions.repository.js';

/** How often deletions still running have their request published again (one lost between commit and publish). */
const REDRIVE_EVERY_MS = 120_000;

/**
 * The deletion coordinator: starts a user's deletion (one running at a time), publishes
 * `events.user.deletion.requested`, folds each owner's receipt in, and marks the deletion done when
 * every owner in ACCOUNT_DATA_OWNERS answered. It lives here, beside the audit log, because this
 * service already keeps durable state and consumes the event stream; the gateway stays stateless.
 */
@Injectable()
export class AccountDeletionsService implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger('AccountDeletions');
  private timer?: NodeJS.Timeout;

  constructor(
    private readonly repo: AccountDeletionsRepository,
    private readonly events: EventBus,
    @Inject(UserDeletions) private readonly deletions: UserDeletions,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  onApplicationBootstrap(): void {
    // On start: whatever a crash left running gets its request again (consumers are idempotent).
    void this.redrive(0);
    this.timer = setInterval(() => void this.redrive(REDRIVE_EVERY_MS), REDRIVE_EVERY_MS);
    this.timer.unref();
  }

  beforeApplicationShutdown(): void {
    clearInterval(this.timer);
  }

  async start(userId: string): Promise<DeletionStarted> {
    const now = this.clock.now();
    const row = await this.repo.tx.run((em) => this.repo.startOrFind(em, userId, userKeyOf(userId), randomUUID(), now));
    // The mark first: from here on every gateway refuses the account's older tokens.
    await this.deletions.put(userId, { deletionId: row.deletion_id, requestedAtMs: row.requested_at.getTime() });
    await this.publish(row.deletion_id, userId, row.requested_at);
    return { deletionId: row.deletion_id, requestedAt: row.requested_at.toISOString() };
  }

  async status(userId: string): Promise<DeletionStatus> {
    const row = await this.repo.latest(userKeyOf(userId));
    if (!row) throw AppError.notFound(AccountErrorCode.NoDeletion, ACCOUNT_MESSAGES.noDeletion);
    return statusOf(row);
  }

  /** One owner's receipt; the deletion is done when every owner answered. */
  async receipt(e: UserDeletionReceiptEvent): Promise<void> {
    const row = await this.repo.receipt(e.deletionId, e.service, { status: 'done', at: e.at, rows: e.rows });
    if (!row || !ACCOUNT_DATA_OWNERS.every((s) => row.services[s]?.status === 'done')) return;
    const finishedAt = await this.repo.finish(e.deletionId, this.clock.now());
    await this.deletions.put(e.userId, {
      deletionId: e.deletionId,
      requestedAtMs: row.requested_at.getTime(),
      doneAtMs: finishedAt.getTime(),
    });
    this.logger.log(
      { deletionId: e.deletionId, ms: finishedAt.getTime() - row.requested_at.getTime() },
      'account deletion done',
    );
  }

  async retention(userId: string): Promise<Retention> {
    const found = await this.repo.retention(userId);
    return found ?? { days: RETENTION_DEFAULT.days };
  }

  async setRetention(userId: string, days: Retention['days']): Promise<Retention> {
    await this.repo.setRetention(userId, days, this.clock.now());
    return { days };
  }

  async retentionPage(after: string | undefined, limit: number): Promise<RetentionPage> {
    const settings = await this.repo.retentionPage(after, limit);
    return { settings, next: settings.length === limit ? settings.at(-1)!.userId : null };
  }

  private publish(deletionId: string, userId: string, at: Date): Promise<void> {
    return this.events.emit('events.user.deletion.requested', {
      eventId: `deletion-requested:${deletionId}`,
      userId,
      at: at.toISOString(),
      deletionId,
    });
  }

  private async redrive(olderThanMs: number): Promise<void> {
    try {
      const running = await this.repo.runningSince(new Date(this.clock.now().getTime() - olderThanMs));
      for (const r of running) {
        await this.deletions.put(r.user_id, { deletionId: r.deletion_id, requestedAtMs: r.requested_at.getTime() });
        await this.publish(r.deletion_id, r.user_id, r.requested_at);
      }
    } catch (err) {
      this.logger.warn({ err: (err as Error).name }, 'could not publish running deletions again; retrying later');
    }
  }
}

function statusOf(row: DeletionRow): DeletionStatus {
  const services: DeletionStatus['services'] = {};
  for (const s of ACCOUNT_DATA_OWNERS) services[s] = row.services[s] ?? { status: 'running' };
  return {
    deletionId: row.deletion_id,
    status: row.finished_at ? 'done' : 'running',
    requestedAt: row.requested_at.toISOString(),
    finishedAt: row.finished_at?.toISOString() ?? null,
    services,
  };
}
