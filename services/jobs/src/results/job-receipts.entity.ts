import { Column, Entity, PrimaryColumn } from 'typeorm';

/** `jobs.job_receipts`: a job's receipt counts, kept with every fold so the history never counts rows. */
@Entity({ name: 'job_receipts' })
export class JobReceiptsEntity {
  @PrimaryColumn({ name: 'job_id', type: 'uuid' })
  jobId!: string;

  @Column({ type: 'integer', default: 0 })
  delivered!: number;

  @Column({ type: 'integer', default: 0 })
  read!: number;

  @Column({ type: 'integer', default: 0 })
  replied!: number;
}
