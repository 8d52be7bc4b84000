import { Body, Controller, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiBody, ApiOkResponse, ApiOperation, ApiParam, ApiProperty, ApiQuery, ApiTags } from '@nestjs/swagger';
import { DashboardErrorCode, LIMITS, parseDashboardLimit, parsePreferencesUpdate } from '@bns/contracts';
import { AppError, RpcClient } from '@bns/service-kit';
import type { AuthUser } from '../auth/auth.types.js';
import { CurrentUser } from '../auth/current-user.decorator.js';

class PreferencesDto {
  @ApiProperty({ example: true })
  auto_login_message_enabled!: boolean;
}

class SetPreferencesDto {
  @ApiProperty({ example: 'user_2abc', description: "Must be the signed-in user's id" })
  clerkUserId!: string;
  @ApiProperty({ type: PreferencesDto })
  preferences!: PreferencesDto;
}

function checked<T>(result: { ok: true; value: T } | { ok: false; message: string; field: string }, code: DashboardErrorCode): T {
  if (!result.ok) throw AppError.validation(code, result.message, { [result.field]: result.message });
  return result.value;
}

/** The user is always the token's subject (AuthGuard has checked the path/body id matches it). */
@ApiTags('dashboard')
@ApiBearerAuth()
@Controller('api')
export class DashboardController {
  constructor(private readonly rpc: RpcClient) {}

  @Get('dashboard/:userId')
  @ApiOperation({ summary: 'Dashboard: recent messages, sessions, monthly usage, all-time stats and preferences' })
  @ApiParam({ name: 'userId', description: "The signed-in user's id" })
  @ApiQuery({ name: 'limit', required: false, description: `recent messages, 1..${LIMITS.dashboardRecentMessagesMax} (default ${LIMITS.dashboardRecentMessages})` })
  @ApiOkResponse({
    schema: {
      example: {
        success: true,
        data: {
          messages: [{ id: '1', job_id: 'j1', recipient: '85291234567', content: 'Hello', status: 'read', error: null, sent_at: '2025-05-01T10:00:00.000Z', created_at: '2025-05-01T10:00:00.000Z' }],
          sessions: [{ id: 's1', phoneNumber: '85291234567', active: true, connected_at: '2025-05-01T09:00:00.000Z', updated_at: '2025-05-01T09:00:00.000Z' }],
          usage: { messages_sent_count: 1, messages_failed_count: 0, monthly: [{ month: '2025-05', sent: 1, failed: 0 }] },
          stats: { totalMessages: 1, successfulMessages: 1, failedMessages: 0, activeSessions: 1 },
          user: { id: 'user_2abc', preferences: { auto_login_message_enabled: true } },
        },
      },
    },
  })
  async dashboard(@CurrentUser() user: AuthUser, @Param('userId') _userId: string, @Query('limit') limit?: unknown) {
    const value = checked(parseDashboardLimit(limit), DashboardErrorCode.InvalidLimit);
    return { success: true, data: await this.rpc.call('dashboard.get', { userId: user.userId, limit: value }) };
  }

  @Post('user/preferences')
  @HttpCode(200)
  @ApiOperation({ summary: 'Save the user preferences (the Auto-Login Success Message toggle)' })
  @ApiBody({ type: SetPreferencesDto })
  @ApiOkResponse({ schema: { example: { success: true, preferences: { auto_login_message_enabled: false } } } })
  async setPreferences(@CurrentUser() user: AuthUser, @Body() body: Partial<SetPreferencesDto> | undefined) {
    const preferences = checked(parsePreferencesUpdate(body?.preferences), DashboardErrorCode.InvalidPreferences);
    return { success: true, preferences: await this.rpc.call('dashboard.preferences.set', { userId: user.userId, preferences }) };
  }
}
