import {
  Inject,
  Injectable,
  Logger,
  type BeforeApplicationShutdown,
  type OnApplicationBootstrap,
} from '@nestjs/common';
import {
  ACCOUNT_LIMITS,
  ACCOUNT_MESSAGES,
  AccountErrorCode,
  type AuditListRequest,
  type AuditPage,
  type AuditRecordedEvent,
} from '@bns/contracts';
import { AppError, deleteInBatches, SERVICE_ENV, UserDeletions } from '@bns/service-kit';
import { CLOCK, type Clock } from '../clock/clock.js';
import type { IntegrationsEnv } from '../config/env.js';
import { AuditRepository, type AuditCursor } from './audit.repository.js';

const DAY_MS = 86_400_000;

/**
 * The audit log: entries arrive as `events.audit.recorded` from wherever the action was performed, are
 * appended once per event id, are read a page at a time by their owner only, and leave after
 * ACCOUNT_LIMITS.auditKeepDays (the purge runs on the injected clock) or with the account.
 */
@Injectable()
export class AuditService implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger('Audit');
  private timer?: NodeJS.Timeout;

  constructor(
    private readonly repo: AuditRepository,
    @Inject(UserDeletions) private readonly deletions: UserDeletions,
    @Inject(CLOCK) private readonly clock: Clock,
    @Inject(SERVICE_ENV) private readonly env: IntegrationsEnv,
  ) {}

  onApplicationBootstrap(): void {
    this.timer = setInterval(() => void this.purgeQuietly(), this.env.RETENTION_PURGE_EVERY_MS);
    this.timer.unref();
  }

  beforeApplicationShutdown(): void {
    clearInterval(this.timer);
  }

  /** Appends an entry, unless the account was deleted after the action (the deletion took its log). */
  async record(e: AuditRecordedEvent): Promise<void> {
    if (this.deletions.isGone(e.userId, e.at)) return;
    await this.repo.append(e);
  }

  async list(req: AuditListRequest): Promise<AuditPage> {
    const cursor = req.cursor === undefined ? undefined : cursorOf(req.cursor);
    const found = await this.repo.page(req.userId, { kind: req.kind, cursor, limit: req.limit });
    const page = found.slice(0, req.limit);
    const last = page[page.length - 1];
    return {
      entries: page.map(({ id: _id, ...entry }) => entry),
      nextCursor: found.length > req.limit && last ? cursorText({ atMs: Date.parse(last.at), id: last.id }) : null,
    };
  }

  /** Removes entries older than a year by the clock, a batch per statement; how many went. */
  purge(): Promise<number> {
    const before = new Date(this.clock.now().getTime() - ACCOUNT_LIMITS.auditKeepDays * DAY_MS);
    return deleteInBatches(() => this.repo.purgeBatch(before));
  }

  private async purgeQuietly(): Promise<void> {
    try {
      const n = await this.purge();
      if (n > 0) this.logger.log({ rows: n }, 'audit entries older than a year removed');
    } catch (err) {
      this.logger.warn({ err: (err as Error).name }, 'audit purge failed; it runs again at the next interval');
    }
  }
}

function cursorText(c: AuditCursor): string {
  return Buffer.from(`${c.atMs}.${c.id}`).toString('base64url');
}

function cursorOf(text: string): AuditCursor {
  const m = /^(\d{1,15})\.(\d{1,19})$/.exec(Buffer.from(text, 'base64url').toString());
  if (!m) {
    throw AppError.validation(AccountErrorCode.AuditQueryInvalid, ACCOUNT_MESSAGES.auditCursorInvalid, {
      cursor: ACCOUNT_MESSAGES.auditCursorInvalid,
    });
  }
  return { atMs: Number(m[1]), id: m[2]! };
}
