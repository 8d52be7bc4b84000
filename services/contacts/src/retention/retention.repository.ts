import { Injectable } from '@nestjs/common';
import { ACCOUNT_LIMITS, type RetentionPage } from '@bns/contracts';
import { RETENTION_CUTOFF_SQL, rows, saveRetentionSettings, Transactions } from '@bns/service-kit';

const CUTOFF = RETENTION_CUTOFF_SQL;

/** Every statement of the conversations' retention purge. */
@Injectable()
export class RetentionRepository {
  constructor(private readonly tx: Transactions) {}

  saveSettings(settings: RetentionPage['settings']): Promise<void> {
    return saveRetentionSettings(this.tx.manager, settings);
  }

  /** One batch of messages (sent and received) older than their owner's period; how many went. */
  async purgeMessagesBatch(now: Date): Promise<number> {
    return (
      await rows<{ n: number }>(
        this.tx.manager,
        `WITH gone AS (
           DELETE FROM messages WHERE id = ANY (ARRAY(
             SELECT m.id FROM messages m LEFT JOIN retention_settings r ON r.user_id = m.user_id
              WHERE m.at < ${CUTOFF} LIMIT $3))
           RETURNING 1
         ) SELECT count(*)::int AS n FROM gone`,
        [now, ACCOUNT_LIMITS.retentionDefaultDays, ACCOUNT_LIMITS.deleteBatchRows],
      )
    )[0]!.n;
  }

  /** One batch of conversations whose last message is older than the period: its text is blanked. */
  async blankConversationsBatch(now: Date): Promise<number> {
    return (
      await rows<{ n: number }>(
        this.tx.manager,
        `WITH done AS (
           UPDATE conversations c SET last_text = '' FROM (
             SELECT c2.user_id, c2.phone FROM conversations c2 LEFT JOIN retention_settings r ON r.user_id = c2.user_id
              WHERE c2.last_text <> '' AND c2.last_at < ${CUTOFF} LIMIT $3) old
            WHERE c.user_id = old.user_id AND c.phone = old.phone
           RETURNING 1
         ) SELECT count(*)::int AS n FROM done`,
        [now, ACCOUNT_LIMITS.retentionDefaultDays, ACCOUNT_LIMITS.deleteBatchRows],
      )
    )[0]!.n;
  }
}
