import {
  Body,
  Controller,
  Delete,
  Get,
  Headers,
  HttpCode,
  Param,
  Post,
  Put,
  Query,
  type PipeTransform,
} from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiBearerAuth,
  ApiConflictResponse,
  ApiHeader,
  ApiNotFoundResponse,
  ApiOperation,
  ApiParam,
  ApiTags,
} from '@nestjs/swagger';
import {
  IDEMPOTENCY_KEY_HEADER,
  LIMITS,
  MESSAGES,
  TEMPLATE_HTTP,
  TEMPLATE_MESSAGES,
  TemplateAnswerSchema,
  TemplateCategoriesAnswerSchema,
  TemplateCreateSchema,
  TemplateListAnswerSchema,
  TemplateListQuerySchema,
  TemplateSchema,
  TemplateStatsAnswerSchema,
  TemplateUpdateSchema,
  TemplatesErrorCode,
  type Infer,
  type Schema,
} from '@bns/contracts';
import { AppError } from '@bns/service-kit';
import type { AuthUser } from '../auth/auth.types.js';
import { CurrentUser } from '../auth/current-user.decorator.js';
import { BodyRule } from '../http/body-size.js';
import {
  ApiSchemaBody,
  ApiSchemaCreated,
  ApiSchemaOk,
  ApiSchemaQuery,
  openApi,
  registerSchema,
} from '../http/openapi.js';
import { SchemaPipe } from '../http/schema.pipe.js';
import { ErrorAnswerSchema, SuccessAnswerSchema } from '../http/answers.js';
import { TemplatesApi } from './templates.api.js';

/** A form refusal as the templates service words it: "Please fix the form errors" with field → message. */
const formPipe = <T>(schema: Schema<T>) =>
  new SchemaPipe<T>(schema, (r) =>
    r.field === ''
      ? AppError.validation(TemplatesErrorCode.InvalidTemplate, TEMPLATE_MESSAGES.bodyNotObject, {})
      : AppError.validation(TemplatesErrorCode.InvalidTemplate, MESSAGES.fixFormErrors, r.errors),
  );
const createForm = formPipe<Infer<typeof TemplateCreateSchema>>(TemplateCreateSchema);
/**
 * A create that names an attachment goes to the templates service as sent: an attachment the user does
 * not have answers 404 before the form is judged, and only that service can ask (the jobs service owns them).
 */
const createBody: PipeTransform = {
  transform(value: unknown) {
    const mediaId = typeof value === 'object' && value !== null ? (value as { mediaId?: unknown }).mediaId : undefined;
    return mediaId === undefined || mediaId === null ? createForm.transform(value) : value;
  },
};
const listQuery = new SchemaPipe(TemplateListQuerySchema, (r) =>
  AppError.validation(TemplatesErrorCode.InvalidFilter, Object.values(r.errors).join('; '), r.errors),
);

// Names kept from the API's first documentation, so clients generated from it keep their types.
registerSchema('TemplateDto', TemplateSchema);
const ERROR = openApi(ErrorAnswerSchema, 'TemplateErrorResponseDto');
const TEMPLATE_ANSWER = 'TemplateResponseDto';
const LIMIT_REACHED = {
  description: `The user already keeps ${LIMITS.templatesPerUserMax} templates: "${TEMPLATE_MESSAGES.limitReached}" (code ${TemplatesErrorCode.LimitReached})`,
  schema: ERROR,
};

/**
 * The /api/templates/... calls (SPEC §7). The AuthGuard has already checked that `:userId` is the
 * token's subject; every call acts as the token's user. Bodies are checked here with the contracts'
 * schemas and checked again by the templates service, which owns the data.
 */
@ApiTags('templates')
@ApiBearerAuth()
@ApiParam({ name: 'userId', description: "The signed-in user's id (must be the token's subject)" })
@ApiNotFoundResponse({ description: 'No such template for this user', schema: ERROR })
@Controller('api/templates')
export class TemplatesController {
  constructor(private readonly api: TemplatesApi) {}

  @Get(':userId/categories')
  @ApiOperation({ summary: 'Every category with how many templates it holds' })
  @ApiSchemaOk(TemplateCategoriesAnswerSchema, 'TemplateCategoriesResponseDto')
  categories(@CurrentUser() user: AuthUser) {
    return this.api.categories(user.userId);
  }

  @Get(':userId/stats')
  @ApiOperation({ summary: 'Template stats: total_templates, favorite_templates, categories, total_usage' })
  @ApiSchemaOk(TemplateStatsAnswerSchema, 'TemplateStatsResponseDto')
  stats(@CurrentUser() user: AuthUser) {
    return this.api.stats(user.userId);
  }

  @Get(':userId')
  @ApiOperation({ summary: 'List templates, newest first, optionally by category and/or favorites only' })
  @ApiSchemaQuery(TemplateListQuerySchema)
  @ApiSchemaOk(TemplateListAnswerSchema, 'TemplateListResponseDto')
  @ApiBadRequestResponse({ description: 'Unknown category or is_favorite value', schema: ERROR })
  list(@CurrentUser() user: AuthUser, @Query(listQuery) query: Infer<typeof TemplateListQuerySchema>) {
    return this.api.list(user.userId, query);
  }

  @Post(':userId')
  @BodyRule(TEMPLATE_HTTP.create)
  @ApiOperation({ summary: 'Create a template' })
  @ApiSchemaBody(TemplateCreateSchema, 'CreateTemplateDto')
  @ApiSchemaCreated(TemplateAnswerSchema, TEMPLATE_ANSWER)
  @ApiBadRequestResponse({ description: '"Please fix the form errors" with field → message', schema: ERROR })
  @ApiConflictResponse(LIMIT_REACHED)
  @ApiHeader({
    name: IDEMPOTENCY_KEY_HEADER,
    required: false,
    description:
      'The same key again answers the template the first try stored (a retry after a 503 makes no second one)',
  })
  create(
    @CurrentUser() user: AuthUser,
    @Body(createBody) body: Infer<typeof TemplateCreateSchema>,
    @Headers(IDEMPOTENCY_KEY_HEADER.toLowerCase()) header?: string | string[],
  ) {
    return this.api.create(user.userId, body, header);
  }

  @Put(':userId/:templateId')
  @BodyRule(TEMPLATE_HTTP.update)
  @ApiOperation({ summary: 'Update a template, fully or partially (e.g. only is_favorite)' })
  @ApiParam({ name: 'templateId', format: 'uuid' })
  @ApiSchemaBody(TemplateUpdateSchema, 'UpdateTemplateDto')
  @ApiSchemaOk(TemplateAnswerSchema, TEMPLATE_ANSWER)
  @ApiBadRequestResponse({ description: '"Please fix the form errors" with field → message', schema: ERROR })
  // The body is judged by the templates service after it has found the template: an id that is not the
  // caller's answers 404 whatever the body, so a 400 never confirms that an id exists. Depth and size
  // are bounded here like every body's.
  update(@CurrentUser() user: AuthUser, @Param('templateId') templateId: string, @Body() body: unknown) {
    return this.api.update(user.userId, templateId, body);
  }

  @Delete(':userId/:templateId')
  @ApiOperation({ summary: 'Delete a template' })
  @ApiParam({ name: 'templateId', format: 'uuid' })
  @ApiSchemaOk(SuccessAnswerSchema, 'SuccessResponseDto')
  remove(@CurrentUser() user: AuthUser, @Param('templateId') templateId: string) {
    return this.api.remove(user.userId, templateId);
  }

  @Post(':userId/:templateId/use')
  @HttpCode(200)
  @ApiOperation({ summary: 'Count one use of a template (atomic increment); answers the updated template' })
  @ApiParam({ name: 'templateId', format: 'uuid' })
  @ApiSchemaOk(TemplateAnswerSchema, TEMPLATE_ANSWER)
  use(@CurrentUser() user: AuthUser, @Param('templateId') templateId: string) {
    return this.api.use(user.userId, templateId);
  }

  @Post(':userId/:templateId/duplicate')
  @ApiOperation({ summary: 'Copy a template as "<name> (Copy)", not a favorite, usage 0' })
  @ApiParam({ name: 'templateId', format: 'uuid' })
  @ApiSchemaCreated(TemplateAnswerSchema, TEMPLATE_ANSWER)
  @ApiConflictResponse(LIMIT_REACHED)
  duplicate(@CurrentUser() user: AuthUser, @Param('templateId') templateId: string) {
    return this.api.duplicate(user.userId, templateId);
  }
}
