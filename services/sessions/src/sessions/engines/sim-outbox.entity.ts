import { Column, Entity, PrimaryColumn } from 'typeorm';
import type { SimulatorOutboxMedia } from '@bns/contracts';

/** `sessions.sim_outbox`: what "arrived" on WhatsApp from the simulated engine (one copy per key). */
@Entity({ name: 'sim_outbox' })
export class SimOutboxEntity {
  @PrimaryColumn({ name: 'user_id', type: 'text' })
  userId!: string;

  @PrimaryColumn({ name: 'idempotency_key', type: 'text' })
  idempotencyKey!: string;

  @Column({ name: 'message_id', type: 'uuid', default: () => 'gen_random_uuid()' })
  messageId!: string;

  @Column({ name: 'from_number', type: 'text' })
  fromNumber!: string;

  @Column({ name: 'to_number', type: 'text' })
  toNumber!: string;

  @Column({ type: 'text' })
  text!: string;

  /** The attachment the message carried, as the phone saw it; null for text. */
  @Column({ type: 'jsonb', nullable: true })
  media!: SimulatorOutboxMedia | null;

  @Column({ name: 'sent_at', type: 'timestamptz', default: () => 'now()' })
  sentAt!: Date;
}
