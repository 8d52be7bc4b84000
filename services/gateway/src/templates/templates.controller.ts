import { Body, Controller, Delete, Get, HttpCode, Param, Post, Put, Query } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiBearerAuth,
  ApiBody,
  ApiCreatedResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiParam,
  ApiQuery,
  ApiTags,
} from '@nestjs/swagger';
import { TEMPLATE_CATEGORIES } from '@bns/contracts';
import { RpcClient } from '@bns/service-kit';
import type { AuthUser } from '../auth/auth.types.js';
import { CurrentUser } from '../auth/current-user.decorator.js';
import { CreateTemplateDto, UpdateTemplateDto } from './dtos/template-body.dto.js';
import {
  SuccessResponseDto,
  TemplateCategoriesResponseDto,
  TemplateErrorResponseDto,
  TemplateListResponseDto,
  TemplateResponseDto,
  TemplateStatsResponseDto,
} from './dtos/template-responses.dto.js';

/**
 * The /api/templates/... calls (SPEC §7). The AuthGuard has already checked that `:userId` is the
 * token's subject; every call acts as the token's user, and the templates service validates and scopes.
 */
@ApiTags('templates')
@ApiBearerAuth()
@ApiParam({ name: 'userId', description: "The signed-in user's id (must be the token's subject)" })
@ApiNotFoundResponse({ type: TemplateErrorResponseDto, description: 'No such template for this user' })
@Controller('api/templates')
export class TemplatesController {
  constructor(private readonly rpc: RpcClient) {}

  @Get(':userId/categories')
  @ApiOperation({ summary: 'Every category with how many templates it holds' })
  @ApiOkResponse({ type: TemplateCategoriesResponseDto })
  async categories(@CurrentUser() user: AuthUser) {
    return { success: true, categories: await this.rpc.call('templates.categories', { userId: user.userId }) };
  }

  @Get(':userId/stats')
  @ApiOperation({ summary: 'Template stats: total_templates, favorite_templates, categories, total_usage' })
  @ApiOkResponse({ type: TemplateStatsResponseDto })
  async stats(@CurrentUser() user: AuthUser) {
    return { success: true, stats: await this.rpc.call('templates.stats', { userId: user.userId }) };
  }

  @Get(':userId')
  @ApiOperation({ summary: 'List templates, newest first, optionally by category and/or favorites only' })
  @ApiQuery({ name: 'category', required: false, enum: ['', 'all', ...TEMPLATE_CATEGORIES], description: 'Empty or "all": every category' })
  @ApiQuery({ name: 'is_favorite', required: false, enum: ['true', 'false'], description: 'true: favorites only; false: the others' })
  @ApiOkResponse({ type: TemplateListResponseDto })
  @ApiBadRequestResponse({ type: TemplateErrorResponseDto, description: 'Unknown category or is_favorite value' })
  async list(@CurrentUser() user: AuthUser, @Query('category') category?: unknown, @Query('is_favorite') isFavorite?: unknown) {
    const templates = await this.rpc.call('templates.list', { userId: user.userId, category, is_favorite: isFavorite });
    return { success: true, templates };
  }

  @Post(':userId')
  @ApiOperation({ summary: 'Create a template' })
  @ApiBody({ type: CreateTemplateDto })
  @ApiCreatedResponse({ type: TemplateResponseDto })
  @ApiBadRequestResponse({ type: TemplateErrorResponseDto, description: '"Please fix the form errors" with field → message' })
  async create(@CurrentUser() user: AuthUser, @Body() body: unknown) {
    return { success: true, template: await this.rpc.call('templates.create', { userId: user.userId, body }) };
  }

  @Put(':userId/:templateId')
  @ApiOperation({ summary: 'Update a template, fully or partially (e.g. only is_favorite)' })
  @ApiParam({ name: 'templateId', format: 'uuid' })
  @ApiBody({ type: UpdateTemplateDto })
  @ApiOkResponse({ type: TemplateResponseDto })
  @ApiBadRequestResponse({ type: TemplateErrorResponseDto, description: '"Please fix the form errors" with field → message' })
  async update(@CurrentUser() user: AuthUser, @Param('templateId') templateId: string, @Body() body: unknown) {
    return { success: true, template: await this.rpc.call('templates.update', { userId: user.userId, templateId, body }) };
  }

  @Delete(':userId/:templateId')
  @ApiOperation({ summary: 'Delete a template' })
  @ApiParam({ name: 'templateId', format: 'uuid' })
  @ApiOkResponse({ type: SuccessResponseDto })
  async remove(@CurrentUser() user: AuthUser, @Param('templateId') templateId: string) {
    await this.rpc.call('templates.delete', { userId: user.userId, templateId });
    return { success: true };
  }

  @Post(':userId/:templateId/use')
  @HttpCode(200)
  @ApiOperation({ summary: 'Count one use of a template (atomic increment); answers the updated template' })
  @ApiParam({ name: 'templateId', format: 'uuid' })
  @ApiOkResponse({ type: TemplateResponseDto })
  async use(@CurrentUser() user: AuthUser, @Param('templateId') templateId: string) {
    return { success: true, template: await this.rpc.call('templates.use', { userId: user.userId, templateId }) };
  }

  @Post(':userId/:templateId/duplicate')
  @ApiOperation({ summary: 'Copy a template as "<name> (Copy)", not a favorite, usage 0' })
  @ApiParam({ name: 'templateId', format: 'uuid' })
  @ApiCreatedResponse({ type: TemplateResponseDto })
  async duplicate(@CurrentUser() user: AuthUser, @Param('templateId') templateId: string) {
    return { success: true, template: await this.rpc.call('templates.duplicate', { userId: user.userId, templateId }) };
  }
}
