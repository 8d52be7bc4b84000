import { Controller, Get, Param } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { RpcClient } from '@bns/service-kit';

@ApiTags('templates')
@ApiBearerAuth()
@Controller('api/templates')
export class TemplatesController {
  constructor(private readonly rpc: RpcClient) {}

  @Get(':userId/stats')
  @ApiOperation({ summary: 'Template stats: total_templates, favorite_templates, categories, total_usage' })
  @ApiOkResponse({ schema: { example: { success: true, stats: { total_templates: 0, favorite_templates: 0, categories: 0, total_usage: 0 } } } })
  async stats(@Param('userId') userId: string) {
    return { success: true, stats: await this.rpc.call('templates.stats', { userId }) };
  }
}
