import { Column, CreateDateColumn, Entity, Index, PrimaryGeneratedColumn, UpdateDateColumn } from 'typeorm';
import type { TemplateCategory } from '@bns/contracts';

/** The table is created by the migrations (synchronize is off); the indexes here mirror them. */
@Entity({ name: 'templates' })
@Index('templates_user_created_idx', ['userId', 'createdAt', 'id'])
@Index('templates_user_category_idx', ['userId', 'category', 'createdAt', 'id'])
@Index('templates_user_favorite_idx', ['userId', 'createdAt', 'id'], { where: 'is_favorite' })
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
