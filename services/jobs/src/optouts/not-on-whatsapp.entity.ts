import { Column, Entity, PrimaryColumn } from 'typeorm';

/** A number WhatsApp said it does not know, as last seen by one account (remembered for a while). */
@Entity({ name: 'not_on_whatsapp' })
export class NotOnWhatsAppEntity {
  @PrimaryColumn({ name: 'user_id', type: 'text' })
  userId!: string;

  @PrimaryColumn({ type: 'text' })
  phone!: string;

  @Column({ type: 'timestamptz' })
  at!: Date;
}
