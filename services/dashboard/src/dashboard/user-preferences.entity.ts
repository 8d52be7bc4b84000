import { Column, Entity, PrimaryColumn } from 'typeorm';

/** The user's settings: the only part of the dashboard's data that is not derived from events. */
@Entity({ name: 'user_preferences' })
export class UserPreferencesEntity {
  @PrimaryColumn({ name: 'user_id', type: 'text' })
  userId!: string;

  @Column({ name: 'auto_login_message_enabled', type: 'boolean', default: true })
  autoLoginMessageEnabled!: boolean;

  @Column({ name: 'updated_at', type: 'timestamptz', default: () => 'now()' })
  updatedAt!: Date;
}
