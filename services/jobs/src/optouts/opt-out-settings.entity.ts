import { Column, Entity, PrimaryColumn } from 'typeorm';

/** An account's opt-out keywords and confirmation reply; no row means the defaults of contracts. */
@Entity({ name: 'opt_out_settings' })
export class OptOutSettingsEntity {
  @PrimaryColumn({ name: 'user_id', type: 'text' })
  userId!: string;

  @Column({ type: 'text', array: true })
  keywords!: string[];

  @Column({ name: 'confirmation_enabled', type: 'boolean', default: false })
  confirmationEnabled!: boolean;

  @Column({ name: 'confirmation_text', type: 'text' })
  confirmationText!: string;

  @Column({ name: 'updated_at', type: 'timestamptz' })
  updatedAt!: Date;
}
