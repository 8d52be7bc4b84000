import { Column, Entity, PrimaryColumn } from 'typeorm';

/** `jobs.recipient_variables`: the variables of one recipient of a personalised job, for the report. */
@Entity({ name: 'recipient_variables' })
export class RecipientVariablesEntity {
  @PrimaryColumn({ name: 'job_id', type: 'uuid' })
  jobId!: string;

  @PrimaryColumn({ type: 'integer' })
  seq!: number;

  @Column({ type: 'jsonb' })
  variables!: Record<string, string>;
}
