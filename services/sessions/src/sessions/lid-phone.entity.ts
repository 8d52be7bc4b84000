import { Column, Entity, PrimaryColumn } from 'typeorm';

/** `sessions.lid_phones`: which LID is which number, as one account learned it from WhatsApp. */
@Entity({ name: 'lid_phones' })
export class LidPhoneEntity {
  @PrimaryColumn({ name: 'user_id', type: 'text' })
  userId!: string;

  /** `<digits>@lid`. */
  @PrimaryColumn({ type: 'text' })
  lid!: string;

  /** International digits. */
  @Column({ type: 'text' })
  phone!: string;

  @Column({ name: 'learned_at', type: 'timestamptz', default: () => 'now()' })
  learnedAt!: Date;
}
