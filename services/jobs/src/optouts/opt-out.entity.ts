import { Column, Entity, Index, PrimaryColumn } from 'typeorm';
import type { OptOutReason } from '@bns/contracts';

/** One number that asked not to be messaged by one account. */
@Entity({ name: 'opt_outs' })
@Index('opt_outs_user_at_idx', ['userId', 'at', 'phone'])
export class OptOutEntity {
  @PrimaryColumn({ name: 'user_id', type: 'text' })
  userId!: string;

  @PrimaryColumn({ type: 'text' })
  phone!: string;

  @Column({ type: 'text' })
  reason!: OptOutReason;

  @Column({ name: 'source_event_id', type: 'text', nullable: true })
  sourceEventId!: string | null;

  @Column({ type: 'timestamptz' })
  at!: Date;
}
