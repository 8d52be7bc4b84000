import { Check, Column, CreateDateColumn, Entity, Index, PrimaryGeneratedColumn, UpdateDateColumn } from 'typeorm';
import { LIMITS, TEMPLATE_CATEGORIES, type TemplateCategory } from '@bns/contracts';

/** The CHECK on phone_numbers; the migrations' constraint has the same name and clause (a test compares them). */
export const PHONE_NUMBERS_CHECK = {
  name: 'templates_phone_numbers_check',
  clause: `cardinality(phone_numbers) <= ${LIMITS.templatePhoneNumbersMax}`,
};
export const CATEGORY_CHECK = {
  name: 'templates_category_check',
  clause: `category IN (${TEMPLATE_CATEGORIES.map((c) => `'${c}'`).join(', ')})`,
};

/**
 * One template (SPEC §3). The property names are the API's field names (and the columns'), so a
 * template reaches the API by dropping `user_id` and writing the two times as ISO text, and a
 * validated input is stored as it is: a new field needs no mapping code. The table is created by the
 * migrations (synchronize is off); the lengths, checks and indexes here mirror them, and the lengths
 * come from LIMITS like the form's rules do.
 */
@Entity({ name: 'templates' })
@Check(PHONE_NUMBERS_CHECK.name, PHONE_NUMBERS_CHECK.clause)
@Check(CATEGORY_CHECK.name, CATEGORY_CHECK.clause)
@Index('templates_user_created_idx', ['user_id', 'created_at', 'id'])
@Index('templates_user_category_idx', ['user_id', 'category', 'created_at', 'id'])
@Index('templates_user_favorite_idx', ['user_id', 'created_at', 'id'], { where: 'is_favorite' })
export class TemplateEntity {
  @PrimaryGeneratedColumn('uuid')
  id!: string;

  @Column({ type: 'text' })
  user_id!: string;

  @Column({ type: 'varchar', length: LIMITS.templateNameMax })
  name!: string;

  @Column({ type: 'varchar', length: LIMITS.templateDescriptionMax, default: '' })
  description!: string;

  @Column({ type: 'varchar', length: LIMITS.templateMessageMax })
  message_content!: string;

  @Column({ type: 'text', array: true, default: () => "'{}'" })
  phone_numbers!: string[];

  @Column({ type: 'text', default: 'general' })
  category!: TemplateCategory;

  @Column({ type: 'boolean', default: false })
  is_favorite!: boolean;

  @Column({ type: 'integer', default: 0 })
  usage_count!: number;

  /** The attachment sent with the message (held in the jobs service as `template:<id>`); null for none. */
  @Column({ name: 'media_id', type: 'text', nullable: true, default: null })
  mediaId!: string | null;

  @CreateDateColumn({ type: 'timestamptz' })
  created_at!: Date;

  @UpdateDateColumn({ type: 'timestamptz' })
  updated_at!: Date;
}
