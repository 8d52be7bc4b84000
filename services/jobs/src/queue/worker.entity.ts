import { Column, Entity, PrimaryColumn } from 'typeorm';

/** `jobs.workers`: a live jobs replica's heartbeat; a silent one's lanes are taken over. */
@Entity({ name: 'workers' })
export class WorkerEntity {
  @PrimaryColumn({ type: 'text' })
  id!: string;

  @Column({ name: 'started_at', type: 'timestamptz' })
  startedAt!: Date;

  @Column({ name: 'seen_at', type: 'timestamptz' })
  seenAt!: Date;
}
