import { Body, Controller, Delete, Get, Headers, HttpCode, Param, Patch, Post, Put, Query, Res } from '@nestjs/common';
import type { Response } from 'express';
import { ApiBearerAuth, ApiNotFoundResponse, ApiOperation, ApiProduces, ApiQuery, ApiTags } from '@nestjs/swagger';
import {
  CONTACTS_HTTP,
  ContactBulkAnswerSchema,
  ContactBulkSchema,
  ContactCreateSchema,
  ContactImportAnswerSchema,
  ContactImportBodySchema,
  ContactListAnswerSchema,
  ContactListQuerySchema,
  ContactPatchSchema,
  ContactSchema,
  ConversationAnswerSchema,
  ContactsErrorCode,
  IDEMPOTENCY_KEY_HEADER,
  jobExportQuerySchema,
  JobResultsErrorCode,
  SegmentCreateSchema,
  SegmentPreviewSchema,
  z,
  type Infer,
} from '@bns/contracts';
import { AppError } from '@bns/service-kit';
import type { AuthUser } from '../auth/auth.types.js';
import { CurrentUser } from '../auth/current-user.decorator.js';
import { BodyRule } from '../http/body-size.js';
import { ErrorAnswerSchema } from '../http/answers.js';
import { idempotencyKeyOf } from '../http/idempotency-key.js';
import { ApiSchemaBody, ApiSchemaCreated, ApiSchemaOk, ApiSchemaQuery, openApi } from '../http/openapi.js';
import { SchemaPipe } from '../http/schema.pipe.js';
import { ContactsApi } from './contacts.api.js';
import { Audited, details } from '../audit/audited.js';

const refusal = (code: ContactsErrorCode) => (r: { message: string; errors: Record<string, string> }) =>
  AppError.validation(code, r.message, r.errors);
const listQuery = new SchemaPipe(ContactListQuerySchema, refusal(ContactsErrorCode.InvalidQuery));
const exportQuery = new SchemaPipe(jobExportQuerySchema, refusal(ContactsErrorCode.InvalidQuery));
const settingsBody = new SchemaPipe(
  z.object({ saveRecipients: z.boolean({ error: 'saveRecipients must be true or false' }) }),
  refusal(ContactsErrorCode.InvalidContact),
);
const ERROR = openApi(ErrorAnswerSchema, 'ContactErrorResponseDto');

/**
 * The contact book (/api/contacts), its segments (/api/segments) and the inbox (/api/conversations).
 * The paths carry no user id: everything belongs to the token's user, and another user's contact or
 * segment is answered 404 by the contacts service. Bodies are checked there (the owner); the query
 * and the answer text here, where their words are the same.
 */
@ApiTags('contacts')
@ApiBearerAuth()
@ApiNotFoundResponse({ description: 'No such contact, segment or conversation for this user', schema: ERROR })
@Controller('api')
export class ContactsController {
  constructor(private readonly api: ContactsApi) {}

  @Get('contacts')
  @ApiOperation({ summary: 'A page of contacts, newest first; q searches number, name, tags and field values' })
  @ApiSchemaQuery(ContactListQuerySchema)
  @ApiSchemaOk(ContactListAnswerSchema)
  list(@CurrentUser() user: AuthUser, @Query(listQuery) query: Infer<typeof ContactListQuerySchema>) {
    return this.api.list(user.userId, query);
  }

  @Get('contacts/export')
  @Audited('export.downloaded', () => details({ what: 'contacts' }))
  @ApiOperation({
    summary:
      'The book (or what q, tag and segmentId select), streamed: ?format=csv (default; formulas neutralised) or xlsx (dates in ?tz, a frozen header)',
  })
  @ApiSchemaQuery(ContactListQuerySchema)
  @ApiQuery({ name: 'format', required: false, enum: ['csv', 'xlsx'] })
  @ApiQuery({ name: 'tz', required: false, description: 'IANA time zone of the XLSX dates (default UTC)' })
  @ApiProduces('text/csv', 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet')
  export(
    @CurrentUser() user: AuthUser,
    @Query(listQuery) query: Infer<typeof ContactListQuerySchema>,
    @Query(exportQuery) how: Infer<typeof jobExportQuerySchema>,
    @Res() res: Response,
  ): Promise<void> {
    const selection = { q: query.q, tag: query.tag, segmentId: query.segmentId };
    return this.api.export(user.userId, selection, res, how.format, how.tz);
  }

  @Post('contacts')
  @ApiOperation({ summary: 'Add a contact {phone, name?, fields?, tags?} (409 when the number is in the book)' })
  @ApiSchemaBody(ContactCreateSchema)
  @ApiSchemaCreated(ContactSchema)
  create(@CurrentUser() user: AuthUser, @Body() body: unknown) {
    return this.api.create(user.userId, body);
  }

  @Post('contacts/import')
  @HttpCode(200)
  @BodyRule(CONTACTS_HTTP.import)
  @ApiOperation({
    summary:
      'Import rows merged by number (later non-empty values win, tags add up), all or nothing: {created, updated, invalid, duplicates}',
  })
  @ApiSchemaBody(ContactImportBodySchema)
  @ApiSchemaOk(ContactImportAnswerSchema)
  import(@CurrentUser() user: AuthUser, @Body() body: unknown) {
    return this.api.import(user.userId, body);
  }

  @Get('contacts/settings')
  @ApiOperation({ summary: 'The contact book settings: saveRecipients ("Save recipients as contacts", default on)' })
  settings(@CurrentUser() user: AuthUser) {
    return this.api.settings(user.userId);
  }

  @Put('contacts/settings')
  @ApiOperation({ summary: 'Turn "Save recipients as contacts" on or off' })
  setSettings(@CurrentUser() user: AuthUser, @Body(settingsBody) body: { saveRecipients: boolean }) {
    return this.api.setSettings(user.userId, body.saveRecipients);
  }

  @Post('contacts/bulk')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Tag, untag or delete contacts chosen by ids or by a saved segment → {affected} (opt-outs stay)',
  })
  @ApiSchemaBody(ContactBulkSchema)
  @ApiSchemaOk(ContactBulkAnswerSchema)
  bulk(@CurrentUser() user: AuthUser, @Body() body: unknown) {
    return this.api.bulk(user.userId, body);
  }

  @Get('contacts/:contactId')
  @ApiOperation({ summary: 'One contact with its facts' })
  @ApiSchemaOk(ContactSchema)
  get(@CurrentUser() user: AuthUser, @Param('contactId') contactId: string) {
    return this.api.get(user.userId, contactId);
  }

  @Patch('contacts/:contactId')
  @ApiOperation({ summary: 'Change a contact: only the fields sent change' })
  @ApiSchemaBody(ContactPatchSchema)
  @ApiSchemaOk(ContactSchema)
  update(@CurrentUser() user: AuthUser, @Param('contactId') contactId: string, @Body() body: unknown) {
    return this.api.update(user.userId, contactId, body);
  }

  @Delete('contacts/:contactId')
  @ApiOperation({ summary: 'Delete a contact (what is known about the number, an opt-out above all, stays)' })
  remove(@CurrentUser() user: AuthUser, @Param('contactId') contactId: string) {
    return this.api.remove(user.userId, contactId);
  }

  @Post('segments')
  @ApiOperation({ summary: 'Save a segment {name, rule: {tags?, fields?, facts?}} → {id}' })
  @ApiSchemaBody(SegmentCreateSchema)
  createSegment(@CurrentUser() user: AuthUser, @Body() body: unknown) {
    return this.api.createSegment(user.userId, body);
  }

  @Post('segments/preview')
  @HttpCode(200)
  @ApiOperation({ summary: 'How many contacts an unsaved rule selects now {rule} → {count} (the editor’s live count)' })
  @ApiSchemaBody(SegmentPreviewSchema)
  preview(@CurrentUser() user: AuthUser, @Body() body: unknown) {
    return this.api.preview(user.userId, body);
  }

  @Get('segments')
  @ApiOperation({ summary: 'The saved segments, newest first' })
  segments(@CurrentUser() user: AuthUser) {
    return this.api.segments(user.userId);
  }

  @Get('segments/:segmentId/count')
  @ApiOperation({ summary: 'How many contacts the segment selects now → {count}' })
  count(@CurrentUser() user: AuthUser, @Param('segmentId') segmentId: string) {
    return this.api.count(user.userId, segmentId);
  }

  @Get('segments/:segmentId/members')
  @ApiOperation({
    summary:
      "A page of the segment's recipients by number, each with the contact's name and fields as variables → {recipients, nextCursor, asOf}; pass asOf and the cursor back for the next page (contacts added after asOf do not join)",
  })
  members(
    @CurrentUser() user: AuthUser,
    @Param('segmentId') segmentId: string,
    @Query('cursor') cursor?: unknown,
    @Query('asOf') asOf?: unknown,
  ) {
    return this.api.membersPage(user.userId, segmentId, cursor, asOf);
  }

  @Delete('segments/:segmentId')
  @ApiOperation({ summary: 'Delete a saved segment' })
  removeSegment(@CurrentUser() user: AuthUser, @Param('segmentId') segmentId: string) {
    return this.api.removeSegment(user.userId, segmentId);
  }

  @Get('conversations')
  @ApiOperation({ summary: 'The inbox: one conversation per number, unread replies first' })
  conversations(@CurrentUser() user: AuthUser) {
    return this.api.conversations(user.userId);
  }

  @Get('conversations/:phone')
  @ApiOperation({
    summary:
      'A conversation, oldest first (8 digits or 852 + 8 digits); opening it marks it read, unless ?markRead=false (a contact’s history)',
  })
  @ApiQuery({ name: 'markRead', required: false, enum: ['true', 'false'] })
  thread(@CurrentUser() user: AuthUser, @Param('phone') phone: string, @Query('markRead') markRead?: unknown) {
    return this.api.thread(user.userId, phone, markRead !== 'false');
  }

  @Post('conversations/:phone/read')
  @HttpCode(200)
  @ApiOperation({ summary: 'Mark the conversation read → {phone, unread: 0}' })
  markRead(@CurrentUser() user: AuthUser, @Param('phone') phone: string) {
    return this.api.mark(user.userId, phone, false);
  }

  @Post('conversations/:phone/unread')
  @HttpCode(200)
  @ApiOperation({ summary: 'Mark the conversation unread again → {phone, unread}' })
  markUnread(@CurrentUser() user: AuthUser, @Param('phone') phone: string) {
    return this.api.mark(user.userId, phone, true);
  }

  @Post('conversations/:phone/messages')
  @HttpCode(202)
  @ApiOperation({
    summary: 'Answer {text, mediaId?}: sent through the send path ahead of queued campaign messages → {id}',
  })
  @ApiSchemaBody(ConversationAnswerSchema)
  answer(
    @CurrentUser() user: AuthUser,
    @Param('phone') phone: string,
    @Body(new SchemaPipe(ConversationAnswerSchema, refusal(ContactsErrorCode.InvalidConversation)))
    body: Infer<typeof ConversationAnswerSchema>,
    @Headers(IDEMPOTENCY_KEY_HEADER.toLowerCase()) header?: string | string[],
  ) {
    return this.api.answer(
      user.userId,
      phone,
      body,
      idempotencyKeyOf(header, JobResultsErrorCode.IdempotencyKeyInvalid),
    );
  }
}
