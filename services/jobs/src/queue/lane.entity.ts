import type { UnansweredDays } from '@bns/contracts';
import { Column, Entity, PrimaryColumn } from 'typeorm';

/** `jobs.lanes`: one account's pacing (`nextSendAt`) and the worker sending for it (`holder`). */
@Entity({ name: 'lanes' })
export class LaneEntity {
  @PrimaryColumn({ name: 'user_id', type: 'text' })
  userId!: string;

  @Column({ type: 'boolean', default: true })
  active!: boolean;

  @Column({ name: 'next_send_at', type: 'timestamptz' })
  nextSendAt!: Date;

  /** The earliest the pace allows the next send; unlike `nextSendAt`, a sleep does not move it. */
  @Column({ name: 'paced_at', type: 'timestamptz' })
  pacedAt!: Date;

  @Column({ type: 'text', nullable: true })
  holder!: string | null;

  @Column({ name: 'updated_at', type: 'timestamptz' })
  updatedAt!: Date;

  /** Local date (policy time zone) of `dayCount`. */
  @Column({ name: 'day_key', type: 'text', nullable: true })
  dayKey!: string | null;

  /** Messages sent on `dayKey`: what the daily cap counts. */
  @Column({ name: 'day_count', type: 'integer', default: 0 })
  dayCount!: number;

  /** Messages since the last long pause (pause every N). */
  @Column({ name: 'run_count', type: 'integer', default: 0 })
  runCount!: number;

  /** Local date of the first send under warm-up. */
  @Column({ name: 'warm_up_from', type: 'text', nullable: true })
  warmUpFrom!: string | null;

  /** Consecutive engine failures without a verdict on the number (several = WhatsApp pushing back). */
  @Column({ name: 'engine_failures', type: 'smallint', default: 0 })
  engineFailures!: number;

  /** Back-offs in a row after WhatsApp pushback; the next one is longer. */
  @Column({ name: 'backoff_level', type: 'smallint', default: 0 })
  backoffLevel!: number;

  @Column({ name: 'backoff_at', type: 'timestamptz', nullable: true })
  backoffAt!: Date | null;

  /** Messages to numbers that never replied, by day in the policy's time zone (the last 62 days at most). */
  @Column({ type: 'jsonb', default: {} })
  unanswered!: UnansweredDays;

  /**
   * The recipient this lane took last (job and seq; null: none), set by the take with the booking.
   * Still pending, it is the send in flight: after a crash it says which message may already be out,
   * so it goes again with the same key (`inFlightSql`). Sent, it sets the lane's slot (`laneSlotSql`):
   * a plain send's record does not write the lane; other outcomes clear it with their reschedule.
   */
  @Column({ name: 'sending_job', type: 'uuid', nullable: true })
  sendingJob!: string | null;

  @Column({ name: 'sending_seq', type: 'integer', nullable: true })
  sendingSeq!: number | null;
}
