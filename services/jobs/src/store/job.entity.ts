import { Column, CreateDateColumn, Entity, PrimaryColumn } from 'typeorm';
import type { JobStatus, MediaRef, PausedReason } from '@bns/contracts';

/** `jobs.jobs`: one bulk send of one account. */
@Entity({ name: 'jobs' })
export class JobEntity {
  @PrimaryColumn({ type: 'uuid' })
  id!: string;

  @Column({ name: 'user_id', type: 'text' })
  userId!: string;

  @Column({ name: 'client_id', type: 'text', nullable: true })
  clientId!: string | null;

  @Column({ type: 'text', default: 'queued' })
  status!: JobStatus;

  @Column({ type: 'text' })
  message!: string;

  @Column({ type: 'integer' })
  total!: number;

  @Column({ type: 'integer', default: 0 })
  sent!: number;

  @Column({ type: 'integer', default: 0 })
  failed!: number;

  /** Recipients not sent to: opted out or known not to be on WhatsApp; their list is `job_skips`. */
  @Column({ type: 'integer', default: 0 })
  skipped!: number;

  @Column({ type: 'text', nullable: true })
  error!: string | null;

  @Column({ name: 'delay_ms', type: 'integer' })
  delayMs!: number;

  @Column({ name: 'estimated_minutes', type: 'integer' })
  estimatedMinutes!: number;

  /** First time a send found the account unlinked; cleared by the next success. */
  @Column({ name: 'unlinked_since', type: 'timestamptz', nullable: true })
  unlinkedSince!: Date | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;

  @Column({ name: 'started_at', type: 'timestamptz', nullable: true })
  startedAt!: Date | null;

  @Column({ name: 'finished_at', type: 'timestamptz', nullable: true })
  finishedAt!: Date | null;

  /** A scheduled job starts sending at this time. */
  @Column({ name: 'start_at', type: 'timestamptz', nullable: true })
  startAt!: Date | null;

  /** One message of POST /v1/messages: taken before the account's other open jobs. */
  @Column({ type: 'boolean', default: false })
  transactional!: boolean;

  /** Its recipients carried variables (a personalised start): their values are in the report. */
  @Column({ type: 'boolean', default: false })
  personalised!: boolean;

  @Column({ name: 'paused_reason', type: 'text', nullable: true })
  pausedReason!: PausedReason | null;

  /** When a job paused by its policy goes on by itself. */
  @Column({ name: 'resumes_at', type: 'timestamptz', nullable: true })
  resumesAt!: Date | null;

  @Column({ name: 'estimated_finish_at', type: 'timestamptz', nullable: true })
  estimatedFinishAt!: Date | null;

  /** The attachment every message of the job carries, as it was when the job started; null for text only. */
  @Column({ type: 'jsonb', nullable: true })
  media!: MediaRef | null;
}
