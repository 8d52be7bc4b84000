import { Column, Entity, PrimaryColumn, type ValueTransformer } from 'typeorm';

/** bigint counters arrive as text from the driver; a user's counts stay far below 2^53. */
export const bigintAsNumber: ValueTransformer = {
  to: (v: number) => v,
  from: (v: string | null) => (v === null ? 0 : Number(v)),
};

/** Per-user counts of messages by status, kept in step with messages so stats never scan history. */
@Entity({ name: 'user_totals' })
export class UserTotalsEntity {
  @PrimaryColumn({ name: 'user_id', type: 'text' })
  userId!: string;

  @Column({ type: 'bigint', default: 0, transformer: bigintAsNumber })
  pending!: number;

  @Column({ type: 'bigint', default: 0, transformer: bigintAsNumber })
  sent!: number;

  @Column({ type: 'bigint', default: 0, transformer: bigintAsNumber })
  failed!: number;

  @Column({ type: 'bigint', default: 0, transformer: bigintAsNumber })
  delivered!: number;

  @Column({ type: 'bigint', default: 0, transformer: bigintAsNumber })
  read!: number;

  /** Messages the recipient answered. */
  @Column({ type: 'bigint', default: 0, transformer: bigintAsNumber })
  replied!: number;
}
