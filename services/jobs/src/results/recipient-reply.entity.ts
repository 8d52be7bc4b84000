import { Column, Entity, PrimaryColumn } from 'typeorm';

/** `jobs.recipient_replies`: one message a recipient wrote back. Personal data: never logged. */
@Entity({ name: 'recipient_replies' })
export class RecipientReplyEntity {
  @PrimaryColumn({ name: 'job_id', type: 'uuid' })
  jobId!: string;

  @PrimaryColumn({ type: 'integer' })
  seq!: number;

  /** The reply's event id: a redelivered event is one reply. */
  @PrimaryColumn({ name: 'reply_id', type: 'text' })
  replyId!: string;

  @Column({ type: 'timestamptz' })
  at!: Date;

  @Column({ type: 'text' })
  text!: string;
}
