import { Column, CreateDateColumn, Entity, PrimaryColumn } from 'typeorm';

/**
 * `jobs.job_starts`: which job an `Idempotency-Key` of a user made, and a hash of the body it came
 * with. The primary key (user_id, idempotency_key) is what makes a duplicate start impossible, also
 * when two arrive at once.
 */
@Entity({ name: 'job_starts' })
export class JobStartEntity {
  @PrimaryColumn({ name: 'user_id', type: 'text' })
  userId!: string;

  @PrimaryColumn({ name: 'idempotency_key', type: 'text' })
  idempotencyKey!: string;

  /** sha256 of the message and recipients as sent: the same key with another body is a 409. */
  @Column({ name: 'request_hash', type: 'text' })
  requestHash!: string;

  @Column({ name: 'job_id', type: 'uuid' })
  jobId!: string;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;
}
