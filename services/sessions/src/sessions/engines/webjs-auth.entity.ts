import { Column, Entity, PrimaryColumn } from 'typeorm';

/** `sessions.webjs_auth`: whatsapp-web.js RemoteAuth profile zips, one per RemoteAuth session name. */
@Entity({ name: 'webjs_auth' })
export class WebjsAuthEntity {
  @PrimaryColumn({ type: 'text' })
  session!: string;

  @Column({ name: 'user_id', type: 'text' })
  userId!: string;

  @Column({ type: 'bytea' })
  data!: Buffer;

  @Column({ name: 'size_bytes', type: 'integer' })
  sizeBytes!: number;

  @Column({ name: 'saved_at', type: 'timestamptz', default: () => 'now()' })
  savedAt!: Date;
}
