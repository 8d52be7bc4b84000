import { Column, Entity, PrimaryColumn } from 'typeorm';

/** `jobs.repliers`: a number that wrote to the account at least once (its messages are answered ones). */
@Entity({ name: 'repliers' })
export class ReplierEntity {
  @PrimaryColumn({ name: 'user_id', type: 'text' })
  userId!: string;

  @PrimaryColumn({ type: 'text' })
  phone!: string;

  /** Its first reply. */
  @Column({ type: 'timestamptz' })
  at!: Date;
}
