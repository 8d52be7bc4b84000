import { Column, Entity, PrimaryColumn } from 'typeorm';

/** `jobs.media`: one attachment of a user, stored once per content (its bytes are in the object store). */
@Entity({ name: 'media' })
export class MediaEntity {
  @PrimaryColumn({ type: 'text' })
  id!: string;

  @Column({ name: 'user_id', type: 'text' })
  userId!: string;

  @Column({ type: 'text' })
  sha256!: string;

  /** The object's name in the MEDIA_BUCKET object store. */
  @Column({ type: 'text' })
  object!: string;

  @Column({ type: 'text' })
  kind!: string;

  @Column({ type: 'text' })
  mime!: string;

  @Column({ type: 'bigint' })
  size!: string;

  @Column({ name: 'file_name', type: 'text' })
  fileName!: string;

  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;

  /** Upload, start or hold: the retention period counts from here. */
  @Column({ name: 'last_used_at', type: 'timestamptz' })
  lastUsedAt!: Date;
}

/** `jobs.media_holds`: something other than a job (a template) that holds an attachment. */
@Entity({ name: 'media_holds' })
export class MediaHoldEntity {
  @PrimaryColumn({ name: 'user_id', type: 'text' })
  userId!: string;

  @PrimaryColumn({ type: 'text' })
  holder!: string;

  @Column({ name: 'media_id', type: 'text' })
  mediaId!: string;
}

export const MEDIA_ENTITIES = [MediaEntity, MediaHoldEntity];
