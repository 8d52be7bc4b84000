import { ACCOUNT_LIMITS, AUDIT_KINDS, AuditPageSchema } from '@bns/contracts';
import {
  API_KEY_SCOPES,
  ApiKeySchema,
  IDEMPOTENCY_KEY_HEADER,
  PROBLEM_CONTENT_TYPE,
  PROBLEMS,
  TemplateSchema,
  V1AccountSchema,
  V1CampaignCreateSchema,
  V1MessageAcceptedSchema,
  V1MessageCreateSchema,
  V1MessageSchema,
  V1OptOutsAddSchema,
  V1ProblemSchema,
  WEBHOOK_EVENT_TYPES,
  JobViewSchema,
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
          requestBody: body(V1CampaignCreateSchema),
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
