import { Column, Entity, PrimaryColumn } from 'typeorm';

/** Messages that reached sent or failed, per user and UTC month (counted once per message). */
@Entity({ name: 'monthly_usage' })
export class MonthlyUsageEntity {
  @PrimaryColumn({ name: 'user_id', type: 'text' })
  userId!: string;

  /** The month's first day, `YYYY-MM-01`. */
  @PrimaryColumn({ type: 'date' })
  month!: string;

  @Column({ name: 'sent_count', type: 'integer', default: 0 })
  sentCount!: number;

  @Column({ name: 'failed_count', type: 'integer', default: 0 })
  failedCount!: number;
}
