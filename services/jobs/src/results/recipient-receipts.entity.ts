import { Column, Entity, PrimaryColumn } from 'typeorm';

/**
 * `jobs.recipient_receipts`: what happened to a sent message afterwards, folded in from
 * `events.message.status` (delivered, read) and `events.message.received` (replied). Each time is set
 * once (the first report wins), so a redelivered event changes nothing.
 */
@Entity({ name: 'recipient_receipts' })
export class RecipientReceiptsEntity {
  @PrimaryColumn({ name: 'job_id', type: 'uuid' })
  jobId!: string;

  @PrimaryColumn({ type: 'integer' })
  seq!: number;

  @Column({ name: 'delivered_at', type: 'timestamptz', nullable: true })
  deliveredAt!: Date | null;

  @Column({ name: 'read_at', type: 'timestamptz', nullable: true })
  readAt!: Date | null;

  @Column({ name: 'replied_at', type: 'timestamptz', nullable: true })
  repliedAt!: Date | null;
}
