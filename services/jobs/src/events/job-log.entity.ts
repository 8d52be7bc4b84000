import { Column, Entity, PrimaryGeneratedColumn } from 'typeorm';
import type { JobLogType } from '@bns/contracts';

/** `jobs.job_logs`: the Activity Log lines of a job. */
@Entity({ name: 'job_logs' })
export class JobLogEntity {
  /** bigserial: the driver hands it over as text. */
  @PrimaryGeneratedColumn({ type: 'bigint' })
  id!: string;

  @Column({ name: 'job_id', type: 'uuid' })
  jobId!: string;

  @Column({ type: 'text' })
  type!: JobLogType;

  @Column({ type: 'text' })
  message!: string;

  /** Millisecond precision (set by the database), so `?since=` compares exactly. */
  @Column({ type: 'timestamptz', insert: false })
  at!: Date;
}
