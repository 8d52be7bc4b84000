import { ApiProperty } from '@nestjs/swagger';
import { TEMPLATE_CATEGORIES, type TemplateCategory } from '@bns/contracts';

export class TemplateDto {
  @ApiProperty({ format: 'uuid' }) id!: string;
  @ApiProperty() name!: string;
  @ApiProperty() description!: string;
  @ApiProperty() message_content!: string;
  @ApiProperty({ type: [String] }) phone_numbers!: string[];
  @ApiProperty({ enum: TEMPLATE_CATEGORIES }) category!: TemplateCategory;
  @ApiProperty() is_favorite!: boolean;
  @ApiProperty() usage_count!: number;
  @ApiProperty({ format: 'date-time' }) created_at!: string;
  @ApiProperty({ format: 'date-time' }) updated_at!: string;
}

export class TemplateStatsDto {
  @ApiProperty() total_templates!: number;
  @ApiProperty() favorite_templates!: number;
  @ApiProperty({ description: 'How many distinct categories the templates use' }) categories!: number;
  @ApiProperty() total_usage!: number;
}

export class TemplateCategoryCountDto {
  @ApiProperty({ enum: TEMPLATE_CATEGORIES }) category!: TemplateCategory;
  @ApiProperty() count!: number;
}

export class TemplateResponseDto {
  @ApiProperty({ example: true }) success!: boolean;
  @ApiProperty({ type: TemplateDto }) template!: TemplateDto;
}

export class TemplateListResponseDto {
  @ApiProperty({ example: true }) success!: boolean;
  @ApiProperty({ type: [TemplateDto], description: 'Newest first' }) templates!: TemplateDto[];
}

export class TemplateCategoriesResponseDto {
  @ApiProperty({ example: true }) success!: boolean;
  @ApiProperty({ type: [TemplateCategoryCountDto], description: 'Every category, in the spec order, with its count' })
  categories!: TemplateCategoryCountDto[];
}

export class TemplateStatsResponseDto {
  @ApiProperty({ example: true }) success!: boolean;
  @ApiProperty({ type: TemplateStatsDto }) stats!: TemplateStatsDto;
}

export class SuccessResponseDto {
  @ApiProperty({ example: true }) success!: boolean;
}

export class TemplateErrorResponseDto {
  @ApiProperty({ example: false }) success!: boolean;
  @ApiProperty({ example: 'Please fix the form errors' }) error!: string;
  @ApiProperty({ example: 'TEMPLATE_INVALID' }) code!: string;
  @ApiProperty({
    required: false,
    description: 'Field → message',
    additionalProperties: { type: 'string' },
    example: { name: 'Template name is required', phone_numbers: 'Invalid phone numbers: 123, abc' },
  })
  errors?: Record<string, string>;
}
