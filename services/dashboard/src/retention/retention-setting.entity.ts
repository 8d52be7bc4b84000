import { Column, Entity, PrimaryColumn } from 'typeorm';

/** A user's retention setting as the integrations service last answered it (days; null keeps until deleted). */
@Entity({ name: 'retention_settings' })
export class RetentionSettingEntity {
  @PrimaryColumn({ name: 'user_id', type: 'text' })
  userId!: string;

  @Column({ type: 'integer', nullable: true })
  days!: number | null;
}
