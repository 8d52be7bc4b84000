import { Injectable } from '@nestjs/common';
import { ACCOUNT_LIMITS, type AuditEntry, type AuditKind, type AuditRecordedEvent } from '@bns/contracts';
import { batchDeleteSql, rows, Transactions } from '@bns/service-kit';

interface EntryRow {
  id: string;
  kind: AuditKind;
  at: Date;
  actor: string;
  address: string | null;
  details: AuditEntry['details'];
}

/** Where a page ends: the last entry's time and id (entries of the same millisecond keep their order). */
export interface AuditCursor {
  atMs: number;
  id: string;
}

/** Every query of audit_log. There is no update: the table's trigger refuses one. */
@Injectable()
export class AuditRepository {
  constructor(readonly tx: Transactions) {}

  /** Appends one entry; a repeat of the same event id adds nothing. */
  async append(e: AuditRecordedEvent): Promise<void> {
    await rows(
      this.tx.manager,
      `INSERT INTO audit_log (event_id, user_id, kind, at, actor, address, details)
       VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (event_id) DO NOTHING`,
      [e.eventId, e.userId, e.kind, e.at, e.actor, e.address ?? null, JSON.stringify(e.details ?? {})],
    );
  }

  /** The user's entries, newest first, after `cursor`; one more than `limit` tells whether a page follows. */
  async page(
    userId: string,
    query: { kind?: AuditKind; cursor?: AuditCursor; limit: number },
  ): Promise<Array<AuditEntry & { id: string }>> {
    const params: unknown[] = [userId, query.limit + 1];
    const where = ['user_id = $1'];
    if (query.kind) {
      params.push(query.kind);
      where.push(`kind = $${params.length}`);
    }
    if (query.cursor) {
      params.push(new Date(query.cursor.atMs), query.cursor.id);
      where.push(`(at, id) < ($${params.length - 1}, $${params.length}::bigint)`);
    }
    const found = await rows<EntryRow>(
      this.tx.manager,
      `SELECT id::text AS id, kind, at, actor, address, details FROM audit_log
        WHERE ${where.join(' AND ')} ORDER BY at DESC, id DESC LIMIT $2`,
      params,
    );
    return found.map((r) => ({
      id: r.id,
      kind: r.kind,
      at: r.at.toISOString(),
      actor: r.actor,
      address: r.address,
      details: r.details,
    }));
  }

  /** One batch of the yearly purge: entries older than `before`; how many went. */
  async purgeBatch(before: Date): Promise<number> {
    return (
      await rows<{ n: number }>(this.tx.manager, batchDeleteSql('audit_log', 'at < $1', '$2'), [
        before,
        ACCOUNT_LIMITS.deleteBatchRows,
      ])
    )[0]!.n;
  }
}
