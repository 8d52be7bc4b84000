import { Injectable } from '@nestjs/common';
import type { MessageMetadata } from '@bns/contracts';
import { row, rows, Transactions } from '@bns/service-kit';

/** The metadata of /v1 messages (message_metadata), bounded by the owner. */
@Injectable()
export class MessageMetadataRepository {
  constructor(private readonly tx: Transactions) {}

  /**
   * Stores a message's metadata (a retry of the same send stores nothing new), and adds it to the
   * message's webhooks queued before it was stored and not tried yet: the message may already be
   * sent by the time the gateway stores its metadata.
   */
  async put(userId: string, messageId: string, metadata: MessageMetadata, now: Date): Promise<void> {
    await this.tx.run(async (em) => {
      await rows(
        em,
        `INSERT INTO message_metadata (user_id, message_id, metadata, created_at) VALUES ($1, $2, $3::jsonb, $4)
         ON CONFLICT (user_id, message_id) DO NOTHING`,
        [userId, messageId, JSON.stringify(metadata), now],
      );
      await rows(
        em,
        `UPDATE webhook_deliveries SET payload = jsonb_set(payload, '{data,metadata}', $3::jsonb)
          WHERE user_id = $1 AND status = 'pending' AND attempts = 0 AND event_type LIKE 'message.%'
            AND payload -> 'data' ->> 'campaignId' = $2 AND NOT (payload -> 'data' ? 'metadata')`,
        [userId, messageId, JSON.stringify(metadata)],
      );
    });
  }

  async get(userId: string, messageId: string): Promise<MessageMetadata | undefined> {
    const found = await row<{ metadata: MessageMetadata }>(
      this.tx.manager,
      `SELECT metadata FROM message_metadata WHERE user_id = $1 AND message_id = $2`,
      [userId, messageId],
    );
    return found?.metadata;
  }
}
