import { Column, Entity, Index, PrimaryColumn } from 'typeorm';
import type { SkipReason } from '@bns/contracts';

/** A recipient a job did not send to, and why. */
@Entity({ name: 'job_skips' })
@Index('job_skips_job_at_idx', ['jobId', 'at'])
export class JobSkipEntity {
  @PrimaryColumn({ name: 'job_id', type: 'uuid' })
  jobId!: string;

  @PrimaryColumn({ type: 'text' })
  phone!: string;

  @Column({ type: 'text' })
  reason!: SkipReason;

  @Column({ type: 'timestamptz' })
  at!: Date;

  /** The row's variables of a personalised job, kept for the report and the export. */
  @Column({ type: 'jsonb', nullable: true })
  variables!: Record<string, string> | null;
}
