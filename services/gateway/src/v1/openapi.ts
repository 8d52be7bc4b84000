import { ACCOUNT_LIMITS, AUDIT_KINDS, AuditPageSchema } from '@bns/contracts';
import {
  API_KEY_SCOPES,
  ApiKeySchema,
  ContactCreateSchema,
  ContactPatchSchema,
  ContactSchema,
  SegmentCreateSchema,
  SegmentSchema,
  IDEMPOTENCY_KEY_HEADER,
  PROBLEM_CONTENT_TYPE,
  PROBLEMS,
  TemplateSchema,
  V1AccountSchema,
  V1CampaignCreateSchema,
  V1CampaignSegmentSchema,
  V1MessageAcceptedSchema,
  V1MessageCreateSchema,
  V1MessageSchema,
  V1OptOutsAddSchema,
  V1ProblemSchema,
  WEBHOOK_EVENT_TYPES,
  JobViewSchema,
  MEDIA_LIMITS,
  MEDIA_UPLOAD_FIELD,
  V1MediaSchema,
  formatMegabytes,
  z,
  type Schema,
} from '@bns/contracts';

/**
 * The OpenAPI 3.1 document of /v1, generated from the same zod schemas the router validates with
 * (zod 4's own JSON Schema output, draft 2020-12: the dialect OpenAPI 3.1 uses), so the document
 * and the checks cannot disagree.
 */
function schemaOf(schema: Schema, io: 'input' | 'output' = 'input'): Record<string, unknown> {
  const json = z.toJSONSchema(schema, { io, target: 'draft-2020-12', unrepresentable: 'any' }) as Record<
    string,
    unknown
  >;
  delete json.$schema;
  return json;
}

const problemRef = { $ref: '#/components/schemas/Problem' };
const errors = (...statuses: number[]) =>
  Object.fromEntries(
    statuses.map((s) => [
      String(s),
      {
        description: Object.values(PROBLEMS)
          .filter((p) => p.status === s)
          .map((p) => `\`${p.type}\`: ${p.title}`)
          .join('; '),
        content: { [PROBLEM_CONTENT_TYPE]: { schema: problemRef } },
      },
    ]),
  );
const ok = (schema: Record<string, unknown>, status = '200', description = 'OK') => ({
  [status]: { description, content: { 'application/json': { schema } } },
});
const body = (schema: Schema) => ({ required: true, content: { 'application/json': { schema: schemaOf(schema) } } });
const idParam = (name: string, description: string) => ({
  name,
  in: 'path',
  required: true,
  schema: { type: 'string' },
  description,
});
const query = (name: string, description: string) => ({
  name,
  in: 'query',
  required: false,
  schema: { type: 'string' },
  description,
});
const idempotency = {
  name: IDEMPOTENCY_KEY_HEADER,
  in: 'header',
  required: false,
  schema: { type: 'string', maxLength: 200 },
  description:
    'Same key + same request → the same answer (Idempotent-Replayed: true); same key + another request → 409',
};
const page = (item: Record<string, unknown>) => ({
  type: 'object',
  properties: { data: { type: 'array', items: item }, nextCursor: { type: ['string', 'null'] } },
  required: ['data', 'nextCursor'],
});
const scope = (s: (typeof API_KEY_SCOPES)[number]) => ({ 'x-scope': s, security: [{ apiKey: [] }] });
const campaign = schemaOf(JobViewSchema.omit({ results: true, jobId: true }).extend({ id: z.string() }), 'output');

const contact = schemaOf(ContactSchema, 'output');

let built: object | undefined;

export function v1OpenApiDocument(): object {
  return (built ??= {
    openapi: '3.1.0',
    info: {
      title: 'Business Notification System API',
      version: '1',
      description: [
        'Send transactional messages and campaigns from your own systems, and receive webhooks.',
        'Authorise every call with `Authorization: Bearer bns_…` (an API key made in the app, "API & Webhooks"); each call names the scope it needs (`x-scope`).',
        'Errors are `application/problem+json` (RFC 9457) with a stable `type`. Every answer carries `RateLimit` and `RateLimit-Policy`; a 429 carries `Retry-After`.',
        `Webhooks are signed per Standard Webhooks (webhook-id, webhook-timestamp, webhook-signature); events: ${WEBHOOK_EVENT_TYPES.join(', ')}.`,
      ].join('\n\n'),
    },
    servers: [{ url: '/' }],
    security: [{ apiKey: [] }],
    paths: {
      '/v1/account': {
        get: {
          summary: 'WhatsApp link state, sending policy and daily cap',
          ...scope('read'),
          responses: { ...ok(schemaOf(V1AccountSchema, 'output')), ...errors(401, 403, 429) },
        },
      },
      '/v1/templates': {
        get: {
          summary: 'Saved message templates',
          ...scope('read'),
          responses: {
            ...ok({
              type: 'object',
              properties: { data: { type: 'array', items: schemaOf(TemplateSchema, 'output') } },
            }),
            ...errors(401, 403, 429),
          },
        },
      },
      '/v1/messages': {
        post: {
          summary:
            'Send one transactional message (goes ahead of queued campaign messages; obeys the sending policy and opt-outs)',
          ...scope('messages:send'),
          parameters: [idempotency],
          requestBody: body(V1MessageCreateSchema),
          responses: {
            ...ok(schemaOf(V1MessageAcceptedSchema, 'output'), '202', 'Accepted'),
            ...errors(400, 401, 403, 404, 409, 413, 429),
          },
        },
      },
      '/v1/messages/{id}': {
        get: {
          summary: "A message's status and timeline",
          ...scope('read'),
          parameters: [idParam('id', 'The id POST /v1/messages answered')],
          responses: { ...ok(schemaOf(V1MessageSchema, 'output')), ...errors(401, 403, 404, 429) },
        },
      },
      '/v1/media': {
        post: {
          summary: `Upload one attachment (multipart/form-data, field "${MEDIA_UPLOAD_FIELD}"): JPEG/PNG/WebP ≤ ${formatMegabytes(MEDIA_LIMITS.maxBytes.image)}, MP4 ≤ ${formatMegabytes(MEDIA_LIMITS.maxBytes.video)}, MP3/OGG/M4A ≤ ${formatMegabytes(MEDIA_LIMITS.maxBytes.audio)}, PDF/DOCX/XLSX/PPTX/TXT/CSV/ZIP ≤ ${formatMegabytes(MEDIA_LIMITS.maxBytes.document)}. Its type is read from its bytes; the same file twice answers the same mediaId. Send it with mediaId on POST /v1/messages or /v1/campaigns`,
          'x-scope': 'messages:send',
          'x-scope-alternatives': ['campaigns:write'],
          security: [{ apiKey: [] }],
          requestBody: {
            required: true,
            content: {
              'multipart/form-data': {
                schema: {
                  type: 'object',
                  required: [MEDIA_UPLOAD_FIELD],
                  properties: { [MEDIA_UPLOAD_FIELD]: { type: 'string', format: 'binary' } },
                },
              },
            },
          },
          responses: {
            ...ok(schemaOf(V1MediaSchema, 'output'), '201', 'Stored'),
            ...errors(400, 401, 403, 413, 429),
          },
        },
      },
      '/v1/media/{id}': {
        get: {
          summary: 'One of your attachments: kind, size, SHA-256, file name',
          ...scope('read'),
          parameters: [idParam('id', 'The mediaId POST /v1/media answered')],
          responses: { ...ok(schemaOf(V1MediaSchema, 'output')), ...errors(401, 403, 404, 429) },
        },
      },
      '/v1/campaigns': {
        get: {
          summary: 'Campaigns, newest first (cursor paging)',
          ...scope('read'),
          parameters: [
            query('cursor', 'nextCursor of the previous page'),
            query('limit', 'page size'),
            query('active', 'true: unfinished only'),
          ],
          responses: { ...ok(page(campaign)), ...errors(400, 401, 403, 429) },
        },
        post: {
          summary:
            'Start a campaign: message with {{placeholders}}, phoneNumbers or recipients with variables, optional startAt',
          ...scope('campaigns:write'),
          parameters: [idempotency],
          requestBody: {
            required: true,
            content: {
              'application/json': {
                schema: { allOf: [schemaOf(V1CampaignCreateSchema), schemaOf(V1CampaignSegmentSchema)] },
              },
            },
          },
          responses: {
            ...ok(
              {
                type: 'object',
                properties: {
                  id: { type: 'string' },
                  status: { type: 'string' },
                  total: { type: 'integer' },
                  estimatedFinishAt: { type: 'string' },
                },
              },
              '201',
              'Created',
            ),
            ...errors(400, 401, 403, 409, 413, 429),
          },
        },
      },
      '/v1/campaigns/{id}': {
        get: {
          summary: 'A campaign: status, progress, pause reason, estimates',
          ...scope('read'),
          parameters: [idParam('id', 'Campaign id')],
          responses: { ...ok(campaign), ...errors(401, 403, 404, 429) },
        },
      },
      '/v1/campaigns/{id}/results': {
        get: {
          summary: 'Per-recipient results (cursor paging)',
          ...scope('read'),
          parameters: [
            idParam('id', 'Campaign id'),
            query('status', 'comma-separated: pending, sent, delivered, read, replied, failed, skipped'),
            query('cursor', 'nextCursor of the previous page'),
            query('limit', 'page size'),
          ],
          responses: { ...ok(page({ type: 'object' })), ...errors(400, 401, 403, 404, 429) },
        },
      },
      ...Object.fromEntries(
        (['pause', 'resume', 'cancel'] as const).map((a) => [
          `/v1/campaigns/{id}/${a}`,
          {
            post: {
              summary: `${a[0]!.toUpperCase()}${a.slice(1)} a campaign`,
              ...scope('campaigns:write'),
              parameters: [idParam('id', 'Campaign id'), idempotency],
              responses: { ...ok(campaign), ...errors(401, 403, 404, 409, 429) },
            },
          },
        ]),
      ),
      '/v1/contacts': {
        get: {
          summary: 'The contact book, newest first (cursor paging); q searches number, name, tags and field values',
          ...scope('read'),
          parameters: [
            query('q', 'text to search'),
            query('tag', 'only contacts with this tag'),
            query('segmentId', 'only the contacts a saved segment selects'),
            query('cursor', 'nextCursor of the previous page'),
            query('limit', 'page size'),
          ],
          responses: {
            ...ok({
              type: 'object',
              properties: {
                data: { type: 'array', items: contact },
                nextCursor: { type: ['string', 'null'] },
                total: { type: 'integer' },
              },
              required: ['data', 'nextCursor', 'total'],
            }),
            ...errors(400, 401, 403, 404, 429),
          },
        },
        post: {
          summary: 'Add a contact (409 when the number is already in the book)',
          ...scope('contacts:write'),
          parameters: [idempotency],
          requestBody: body(ContactCreateSchema),
          responses: { ...ok(contact, '201', 'Created'), ...errors(400, 401, 403, 409, 429) },
        },
      },
      '/v1/contacts/{id}': {
        get: {
          summary: 'A contact with its facts (opted out, last messaged, delivered, read, replied)',
          ...scope('read'),
          parameters: [idParam('id', 'Contact id')],
          responses: { ...ok(contact), ...errors(401, 403, 404, 429) },
        },
        patch: {
          summary: 'Change a contact: only the fields sent change',
          ...scope('contacts:write'),
          parameters: [idParam('id', 'Contact id')],
          requestBody: body(ContactPatchSchema),
          responses: { ...ok(contact), ...errors(400, 401, 403, 404, 409, 429) },
        },
        delete: {
          summary: "Delete a contact (the number's opt-out, if any, stays)",
          ...scope('contacts:write'),
          parameters: [idParam('id', 'Contact id')],
          responses: { ...ok({ type: 'object' }), ...errors(401, 403, 404, 429) },
        },
      },
      '/v1/segments': {
        get: {
          summary: 'Saved segments, newest first',
          ...scope('read'),
          responses: {
            ...ok({
              type: 'object',
              properties: { data: { type: 'array', items: schemaOf(SegmentSchema, 'output') } },
            }),
            ...errors(401, 403, 429),
          },
        },
        post: {
          summary: 'Save a segment {name, rule: {tags?, fields?, facts?}} → {id}',
          ...scope('contacts:write'),
          parameters: [idempotency],
          requestBody: body(SegmentCreateSchema),
          responses: {
            ...ok({ type: 'object', properties: { id: { type: 'string' } } }, '201', 'Created'),
            ...errors(400, 401, 403, 409, 429),
          },
        },
      },
      '/v1/segments/{id}': {
        delete: {
          summary: 'Delete a saved segment',
          ...scope('contacts:write'),
          parameters: [idParam('id', 'Segment id')],
          responses: { ...ok({ type: 'object' }), ...errors(401, 403, 404, 429) },
        },
      },
      '/v1/segments/{id}/count': {
        get: {
          summary: 'How many contacts the segment selects now',
          ...scope('read'),
          parameters: [idParam('id', 'Segment id')],
          responses: {
            ...ok({ type: 'object', properties: { count: { type: 'integer' } } }),
            ...errors(401, 403, 404, 429),
          },
        },
      },
      '/v1/opt-outs': {
        get: {
          summary: 'The opt-out list',
          ...scope('read'),
          parameters: [
            query('cursor', 'nextCursor of the previous page'),
            query('limit', 'page size'),
            query('q', 'digits to search'),
          ],
          responses: { ...ok(page({ type: 'object' })), ...errors(400, 401, 403, 429) },
        },
        post: {
          summary: 'Add numbers to the opt-out list',
          ...scope('campaigns:write'),
          parameters: [idempotency],
          requestBody: body(V1OptOutsAddSchema),
          responses: { ...ok({ type: 'object' }, '201', 'Added'), ...errors(400, 401, 403, 409, 429) },
        },
        delete: {
          summary: 'Remove a number from the opt-out list',
          ...scope('campaigns:write'),
          parameters: [{ ...query('phoneNumber', 'the number'), required: true }],
          responses: { ...ok({ type: 'object' }), ...errors(400, 401, 403, 404, 429) },
        },
      },
      '/v1/audit': {
        get: {
          summary: `The account's audit log, newest first (kinds: ${AUDIT_KINDS.join(', ')}); actor is the person or key:<prefix>, address truncated to /24 or /48; kept a year, never changed`,
          ...scope('read'),
          parameters: [
            query('kind', 'only entries of this kind'),
            query('cursor', 'nextCursor of the previous page'),
            query(
              'limit',
              `page size, 1 to ${ACCOUNT_LIMITS.auditPageMax} (default ${ACCOUNT_LIMITS.auditPageDefault})`,
            ),
          ],
          responses: { ...ok(schemaOf(AuditPageSchema, 'output')), ...errors(400, 401, 403, 429) },
        },
      },
      '/v1/opt-outs/{phoneNumber}': {
        delete: {
          summary: 'Remove a number from the opt-out list',
          ...scope('campaigns:write'),
          parameters: [idParam('phoneNumber', 'the number')],
          responses: { ...ok({ type: 'object' }), ...errors(400, 401, 403, 404, 429) },
        },
      },
    },
    components: {
      securitySchemes: {
        apiKey: { type: 'http', scheme: 'bearer', description: 'An API key: bns_ followed by 43 characters' },
      },
      schemas: { Problem: schemaOf(V1ProblemSchema, 'output'), ApiKey: schemaOf(ApiKeySchema, 'output') },
    },
  });
}
