import { Column, Entity, PrimaryColumn } from 'typeorm';

export type RecipientState = 'pending' | 'sending' | 'sent' | 'failed';

/** `jobs.job_recipients`: one number of a job, in list order (`seq`), and what became of it. */
@Entity({ name: 'job_recipients' })
export class JobRecipientEntity {
  @PrimaryColumn({ name: 'job_id', type: 'uuid' })
  jobId!: string;

  @PrimaryColumn({ type: 'integer' })
  seq!: number;

  @Column({ type: 'text' })
  phone!: string;

  /** The personalised text; null when it is the job's message as it is. */
  @Column({ type: 'text', nullable: true })
  text!: string | null;

  /** A personalised recipient's variables (name → value), for the report; null when it has none. */
  @Column({ type: 'jsonb', nullable: true })
  variables!: Record<string, string> | null;

  /** `sending` only in rows a replica of an earlier version marked: in flight is `inFlight` now. */
  @Column({ type: 'text', default: 'pending' })
  state!: RecipientState;

  /**
   * In flight by a mark on its own row: an earlier version's take, or a lane that moved to another job
   * while it named this one. A take now names its recipient on the lane (`LaneEntity.sendingJob`).
   */
  @Column({ name: 'in_flight', type: 'boolean', default: false })
  inFlight!: boolean;

  @Column({ type: 'smallint', default: 0 })
  attempts!: number;

  @Column({ name: 'next_attempt_at', type: 'timestamptz', nullable: true })
  nextAttemptAt!: Date | null;

  @Column({ type: 'text', nullable: true })
  error!: string | null;

  @Column({ name: 'done_at', type: 'timestamptz', nullable: true })
  doneAt!: Date | null;

  /** The gap planned after this message (pace, plus a long pause when one followed), ms. */
  @Column({ name: 'paced_ms', type: 'integer', nullable: true })
  pacedMs!: number | null;

  /**
   * What happened to the message afterwards, folded in from `events.message.status` (delivered, read)
   * and `events.message.received` (replied). Each time is set once (the first report wins), so a
   * redelivered event changes nothing. No index holds them: a receipt is a HOT update.
   */
  @Column({ name: 'delivered_at', type: 'timestamptz', nullable: true })
  deliveredAt!: Date | null;

  @Column({ name: 'read_at', type: 'timestamptz', nullable: true })
  readAt!: Date | null;

  @Column({ name: 'replied_at', type: 'timestamptz', nullable: true })
  repliedAt!: Date | null;
}
