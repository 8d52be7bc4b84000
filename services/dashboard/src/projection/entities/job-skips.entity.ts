import { Column, Entity, PrimaryColumn } from 'typeorm';

/** `dashboard.job_skips`: how many recipients a job skipped (opted out, not on WhatsApp), as it last said. */
@Entity({ name: 'job_skips' })
export class JobSkipsEntity {
  @PrimaryColumn({ name: 'user_id', type: 'text' })
  userId!: string;

  @PrimaryColumn({ name: 'job_id', type: 'text' })
  jobId!: string;

  /** The UTC month (its first day) the job first reported skips in: the month they count in. */
  @Column({ type: 'date' })
  month!: string;

  @Column({ type: 'integer' })
  skipped!: number;
}
