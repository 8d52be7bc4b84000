import { Body, Controller, Get, HttpCode, Post, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import {
  DashboardAnswerSchema,
  DashboardErrorCode,
  DashboardQuerySchema,
  PreferencesAnswerSchema,
  SetPreferencesBodySchema,
  type Infer,
} from '@bns/contracts';
import { AppError } from '@bns/service-kit';
import type { AuthUser } from '../auth/auth.types.js';
import { CurrentUser } from '../auth/current-user.decorator.js';
import { ApiSchemaBody, ApiSchemaOk, ApiSchemaQuery } from '../http/openapi.js';
import { SchemaPipe } from '../http/schema.pipe.js';
import { DashboardApi } from './dashboard.api.js';

const dashboardQuery = new SchemaPipe(DashboardQuerySchema, (r) =>
  AppError.validation(DashboardErrorCode.InvalidLimit, r.message, { [r.field]: r.message }),
);
// eslint-disable-next-line no-useless-assignment -- used by a parameter decorator of the last method, which the rule does not see
const PIPES = {
  preferences: new SchemaPipe(SetPreferencesBodySchema, (r) =>
    AppError.validation(DashboardErrorCode.InvalidPreferences, r.message, { [r.field || 'preferences']: r.message }),
  ),
};

/** The user is always the token's subject (AuthGuard has checked the path/body id matches it). */
@ApiTags('dashboard')
@ApiBearerAuth()
@Controller('api')
export class DashboardController {
  constructor(private readonly api: DashboardApi) {}

  @Get('dashboard/:userId')
  @ApiOperation({ summary: 'Dashboard: recent messages, sessions, monthly usage, all-time stats and preferences' })
  @ApiParam({ name: 'userId', description: "The signed-in user's id" })
  @ApiSchemaQuery(DashboardQuerySchema)
  @ApiSchemaOk(DashboardAnswerSchema)
  dashboard(@CurrentUser() user: AuthUser, @Query(dashboardQuery) query: Infer<typeof DashboardQuerySchema>) {
    return this.api.dashboard(user.userId, query);
  }

  @Post('user/preferences')
  @HttpCode(200)
  @ApiOperation({ summary: 'Save the user preferences (the Auto-Login Success Message toggle)' })
  @ApiSchemaBody(SetPreferencesBodySchema)
  @ApiSchemaOk(PreferencesAnswerSchema)
  setPreferences(@CurrentUser() user: AuthUser, @Body(PIPES.preferences) body: Infer<typeof SetPreferencesBodySchema>) {
    return this.api.setPreferences(user.userId, body);
  }
}
