import { Column, Entity, Index, PrimaryColumn } from 'typeorm';

/** The id of an event already applied to the read model: a redelivery or a second publish is skipped. */
@Entity({ name: 'applied_events' })
@Index('applied_events_applied_at_idx', ['appliedAt'])
export class AppliedEventEntity {
  @PrimaryColumn({ name: 'event_id', type: 'text' })
  eventId!: string;

  @Column({ name: 'applied_at', type: 'timestamptz', default: () => 'now()' })
  appliedAt!: Date;
}
