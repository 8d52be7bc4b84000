import { Controller, Get, HttpCode, Param, Post, Req } from '@nestjs/common';
import { ApiBearerAuth, ApiBody, ApiConsumes, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { Request } from 'express';
import { MEDIA_UPLOAD_FIELD, MediaAnswerSchema } from '@bns/contracts';
import { CurrentUser } from '../auth/current-user.decorator.js';
import type { AuthUser } from '../auth/auth.types.js';
import { ApiSchemaOk } from '../http/openapi.js';
import { MediaApi } from './media.api.js';

/** Attachments: upload one file (multipart), read its metadata. Another user's id is "not found". */
@ApiTags('media')
@ApiBearerAuth()
@Controller('api/media')
export class MediaController {
  constructor(private readonly media: MediaApi) {}

  @Post()
  @HttpCode(201)
  @ApiOperation({
    summary:
      'Upload one attachment (multipart/form-data, field "file"): JPEG/PNG/WebP ≤ 5 MB, MP4 ≤ 16 MB, MP3/OGG/M4A ≤ 16 MB, PDF/DOCX/XLSX/PPTX/TXT/CSV/ZIP ≤ 64 MB. Its type is read from its bytes; the same file twice answers the same mediaId',
  })
  @ApiConsumes('multipart/form-data')
  @ApiBody({
    schema: {
      type: 'object',
      required: [MEDIA_UPLOAD_FIELD],
      properties: { [MEDIA_UPLOAD_FIELD]: { type: 'string', format: 'binary' } },
    },
  })
  @ApiSchemaOk(MediaAnswerSchema)
  upload(@CurrentUser() user: AuthUser, @Req() req: Request) {
    return this.media.upload(user.userId, req);
  }

  @Get(':mediaId')
  @ApiOperation({ summary: "One of the caller's attachments: kind, size, SHA-256, file name" })
  @ApiSchemaOk(MediaAnswerSchema)
  get(@CurrentUser() user: AuthUser, @Param('mediaId') mediaId: string) {
    return this.media.get(user.userId, mediaId);
  }
}
