import { Column, Entity, Index, PrimaryColumn } from 'typeorm';

/**
 * A message the user's WhatsApp account received (personal data: kept only here, never logged, deleted
 * with the user's read model). `replyTo` is the message it answers, once that message is known.
 */
@Entity({ name: 'inbound_messages' })
@Index('inbound_messages_unmatched_idx', ['userId', 'fromNumber', 'receivedAt'], { where: 'reply_to IS NULL' })
export class InboundMessageEntity {
  @PrimaryColumn({ name: 'user_id', type: 'text' })
  userId!: string;

  @PrimaryColumn({ name: 'message_id', type: 'text' })
  messageId!: string;

  /** As the dashboard's messages name recipients (an 8-digit Hong Kong number has no 852). */
  @Column({ name: 'from_number', type: 'text' })
  fromNumber!: string;

  @Column({ type: 'text' })
  text!: string;

  @Column({ name: 'received_at', type: 'timestamptz' })
  receivedAt!: Date;

  @Column({ name: 'reply_to', type: 'bigint', nullable: true })
  replyTo!: string | null;
}
