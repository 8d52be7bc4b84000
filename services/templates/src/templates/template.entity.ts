import { Column, CreateDateColumn, Entity, Index, PrimaryGeneratedColumn, UpdateDateColumn } from 'typeorm';
import type { TemplateCategory } from '@bns/contracts';

@Entity({ name: 'templates' })
@Index('templates_user_created_idx', ['userId', 'createdAt'])
export class TemplateEntity {
  @PrimaryGeneratedColumn('uuid')
  id!: string;

  @Column({ name: 'user_id', type: 'text' })
  userId!: string;

  @Column({ type: 'varchar', length: 100 })
  name!: string;

  @Column({ type: 'varchar', length: 500, default: '' })
  description!: string;

  @Column({ name: 'message_content', type: 'varchar', length: 1000 })
  messageContent!: string;

  @Column({ name: 'phone_numbers', type: 'text', array: true, default: () => "'{}'" })
  phoneNumbers!: string[];

  @Column({ type: 'text', default: 'general' })
  category!: TemplateCategory;

  @Column({ name: 'is_favorite', type: 'boolean', default: false })
  isFavorite!: boolean;

  @Column({ name: 'usage_count', type: 'integer', default: 0 })
  usageCount!: number;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt!: Date;
}
