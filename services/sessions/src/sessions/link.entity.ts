import { Column, Entity, PrimaryColumn } from 'typeorm';
import type { WaEngineName } from '@bns/contracts';

/** `sessions.links`: one row per linked account, the source of truth for restores. */
@Entity({ name: 'links' })
export class LinkEntity {
  @PrimaryColumn({ name: 'user_id', type: 'text' })
  userId!: string;

  @Column({ name: 'session_id', type: 'uuid', default: () => 'gen_random_uuid()' })
  sessionId!: string;

  @Column({ type: 'text' })
  engine!: WaEngineName;

  @Column({ name: 'phone_number', type: 'text' })
  phoneNumber!: string;

  @Column({ name: 'linked_at', type: 'timestamptz', default: () => 'now()' })
  linkedAt!: Date;

  /** When the once-per-link auto-login message was claimed; null until then. */
  @Column({ name: 'welcome_sent_at', type: 'timestamptz', nullable: true })
  welcomeSentAt!: Date | null;

  @Column({ name: 'updated_at', type: 'timestamptz', default: () => 'now()' })
  updatedAt!: Date;
}
