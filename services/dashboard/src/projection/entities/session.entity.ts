import { Column, Entity, PrimaryColumn } from 'typeorm';

/** A WhatsApp link of the user as the dashboard last saw it; at most one is active. */
@Entity({ name: 'sessions' })
export class SessionEntity {
  @PrimaryColumn({ name: 'user_id', type: 'text' })
  userId!: string;

  @PrimaryColumn({ name: 'session_id', type: 'text' })
  sessionId!: string;

  @Column({ name: 'phone_number', type: 'text', nullable: true })
  phoneNumber!: string | null;

  @Column({ type: 'boolean' })
  active!: boolean;

  @Column({ name: 'connected_at', type: 'timestamptz', nullable: true })
  connectedAt!: Date | null;

  @Column({ name: 'disconnected_at', type: 'timestamptz', nullable: true })
  disconnectedAt!: Date | null;

  @Column({ name: 'updated_at', type: 'timestamptz' })
  updatedAt!: Date;
}
