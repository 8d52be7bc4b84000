import { Column, Entity, PrimaryColumn } from 'typeorm';
import type { SessionState } from '@bns/contracts';

/** The last applied link state per user: a state event older than it is stale and ignored. */
@Entity({ name: 'link_states' })
export class LinkStateEntity {
  @PrimaryColumn({ name: 'user_id', type: 'text' })
  userId!: string;

  @Column({ type: 'text' })
  state!: SessionState;

  @Column({ type: 'timestamptz' })
  at!: Date;
}
