import { ApiProperty, ApiPropertyOptional, PartialType } from '@nestjs/swagger';
import { LIMITS, TEMPLATE_CATEGORIES, type TemplateCategory } from '@bns/contracts';

/**
 * The create body, for the API docs. The gateway passes the body through as sent: the templates
 * service checks it with the shared rules of @bns/contracts, so the web and the API say the same words.
 */
export class CreateTemplateDto {
  @ApiProperty({ maxLength: LIMITS.templateNameMax, example: 'Weekly promo' })
  name!: string;

  @ApiPropertyOptional({ maxLength: LIMITS.templateDescriptionMax, example: 'Sent every Monday' })
  description?: string;

  @ApiProperty({ maxLength: LIMITS.templateMessageMax, example: 'Hello! *20% off* this week only.' })
  message_content!: string;

  @ApiPropertyOptional({
    description: `Up to ${LIMITS.templatePhoneNumbersMax} numbers of ${LIMITS.templatePhoneMinDigits}-${LIMITS.templatePhoneMaxDigits} digits, no duplicates; an array or a JSON string of one`,
    oneOf: [{ type: 'array', items: { type: 'string' } }, { type: 'string', example: '["85212345678"]' }],
    example: ['85212345678', '85287654321'],
  })
  phone_numbers?: string[] | string;

  @ApiPropertyOptional({ enum: TEMPLATE_CATEGORIES, default: 'general' })
  category?: TemplateCategory;

  @ApiPropertyOptional({ default: false })
  is_favorite?: boolean;
}

/** Full or partial: only the fields sent change (e.g. only `is_favorite`). */
export class UpdateTemplateDto extends PartialType(CreateTemplateDto) {}
