import { Column, Entity, PrimaryGeneratedColumn } from 'typeorm';
import { INTEGRATIONS_LIMITS, type ApiKeyScope } from '@bns/contracts';

/** One API key: its hash only (the secret is shown once, at creation, and never stored). */
@Entity({ name: 'api_keys' })
export class ApiKeyEntity {
  @PrimaryGeneratedColumn('uuid')
  id!: string;

  @Column({ type: 'text' })
  user_id!: string;

  @Column({ type: 'varchar', length: INTEGRATIONS_LIMITS.apiKeyNameMax })
  name!: string;

  @Column({ type: 'text' })
  prefix!: string;

  @Column({ type: 'char', length: 64, unique: true })
  secret_hash!: string;

  @Column({ type: 'text', array: true })
  scopes!: ApiKeyScope[];

  @Column({ type: 'timestamptz' })
  created_at!: Date;

  @Column({ type: 'timestamptz', nullable: true })
  last_used_at!: Date | null;

  @Column({ type: 'timestamptz', nullable: true })
  revoked_at!: Date | null;
}
