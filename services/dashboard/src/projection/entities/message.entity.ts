import { Column, Entity, Index, PrimaryGeneratedColumn, Unique } from 'typeorm';
import { LIMITS, type MessageStatus } from '@bns/contracts';

/** One message the user sent, as the read model knows it (one row per user and idempotency key). */
@Entity({ name: 'messages' })
@Unique('messages_user_key_uq', ['userId', 'idempotencyKey'])
@Index('messages_user_recent_idx', ['userId', 'createdAt', 'id'])
@Index('messages_user_recipient_idx', ['userId', 'recipient', 'sentAt'])
export class MessageEntity {
  /** bigint: the driver hands it over as text. */
  @PrimaryGeneratedColumn('identity', { type: 'bigint', generatedIdentity: 'ALWAYS' })
  id!: string;

  @Column({ name: 'user_id', type: 'text' })
  userId!: string;

  @Column({ name: 'idempotency_key', type: 'text' })
  idempotencyKey!: string;

  @Column({ name: 'job_id', type: 'text' })
  jobId!: string;

  @Column({ type: 'text' })
  recipient!: string;

  @Column({ type: 'text' })
  content!: string;

  @Column({ type: 'text' })
  status!: MessageStatus;

  /** The first of sent/failed the message reached: counted once in monthly usage, never recounted. */
  @Column({ type: 'text', nullable: true })
  outcome!: 'sent' | 'failed' | null;

  @Column({ type: 'text', nullable: true })
  error!: string | null;

  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;

  @Column({ name: 'sent_at', type: 'timestamptz', nullable: true })
  sentAt!: Date | null;

  @Column({ name: 'updated_at', type: 'timestamptz', default: () => 'now()' })
  updatedAt!: Date;

  /** When the recipient first answered this message. */
  @Column({ name: 'replied_at', type: 'timestamptz', nullable: true })
  repliedAt!: Date | null;

  /** The start of that answer. */
  @Column({ type: 'varchar', length: LIMITS.replyPreviewMax, nullable: true })
  reply!: string | null;
}
