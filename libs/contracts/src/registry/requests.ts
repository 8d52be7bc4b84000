import {
  ContactCreateRequestSchema,
  ContactImportRequestSchema,
  ContactListRequestSchema,
  ContactBulkRequestSchema,
  ContactRefSchema,
  ConversationMarkRequestSchema,
  ContactsUserRequestSchema,
  ContactUpdateRequestSchema,
  ConversationRefSchema,
  SegmentCreateRequestSchema,
  SegmentMembersRequestSchema,
  SegmentRefSchema,
  SettingsSetRequestSchema,
} from '../contacts/schemas.js';
import { AuditListRequestSchema } from '../account/audit.js';
import {
  AccountUserRequestSchema,
  DeletionStartRequestSchema,
  RetentionPageRequestSchema,
  RetentionSetRequestSchema,
} from '../account/schemas.js';
import {
  DashboardGetRequestSchema,
  PreferencesGetRequestSchema,
  PreferencesSetRequestSchema,
} from '../dashboard/schemas.js';
import {
  JobExportRequestSchema,
  JobHistoryRequestSchema,
  JobLogsRequestSchema,
  JobRefSchema,
  JobResultsRequestSchema,
  JobsUserRequestSchema,
  OptOutExportRequestSchema,
  OptOutListRequestSchema,
  OptOutNumbersRequestSchema,
  OptOutRemoveRequestSchema,
  OptOutSettingsSetRequestSchema,
  PolicySetRequestSchema,
  StartJobRequestSchema,
} from '../jobs/schemas.js';
import { JobStatusRequestSchema } from '../jobs/schemas.js';
import { MediaGetRequestSchema, MediaHoldRequestSchema, MediaRegisterRequestSchema } from '../media/schemas.js';
import {
  IdempotencyBeginRequestSchema,
  IdempotencyFinishRequestSchema,
  IdempotencyReleaseRequestSchema,
} from '../integrations/idempotency.js';
import {
  ApiKeyCreateRequestSchema,
  ApiKeyRefSchema,
  ApiKeyVerifyRequestSchema,
  IntegrationsUserRequestSchema,
} from '../integrations/keys.js';
import {
  DeliveryRefSchema,
  WebhookCreateRequestSchema,
  WebhookRefSchema,
  WebhookUpdateRequestSchema,
} from '../integrations/webhooks.js';
import { MessageMetadataPutRequestSchema, MessageMetadataRefSchema } from '../integrations/v1.js';
import { SessionsErrorCode } from '../sessions/rpc.js';
import {
  PairingCodeRequestSchema,
  SimulatorPairRequestSchema,
  SessionConnectRequestSchema,
  SessionSendRequestSchema,
  SessionUserRequestSchema,
  SimulatorInboundRequestSchema,
} from '../sessions/schemas.js';
import {
  TemplateCreateRequestSchema,
  TemplateListRequestSchema,
  TemplateRefSchema,
  TemplateUpdateRequestSchema,
  TemplateUserRequestSchema,
} from '../templates/schemas.js';
import { CommonErrorCode } from '../common/errors.js';
import { isSharded } from '../common/rpc.js';
import { ISSUE_FIELD_MAX, PingRequestSchema, plainIssueMessage, REQUEST_MESSAGES, z } from '../common/schema.js';
import type { RequestKey, RequestOf } from './rpc.js';

/**
 * The schema of every NATS request, by its logical key: the owning service checks each incoming
 * request with it before a handler runs (service-kit `@Rpc`), and the request's TypeScript type is the
 * schema's output. A key of `RequestMap` without a schema here does not compile.
 */
export type RequestSchemas = { readonly [K in RequestKey]: z.ZodType<RequestOf<K>> };

export const REQUEST_SCHEMAS: RequestSchemas = {
  'sessions.ping': PingRequestSchema,
  'jobs.ping': PingRequestSchema,
  'templates.ping': PingRequestSchema,
  'dashboard.ping': PingRequestSchema,

  'sessions.connect': SessionConnectRequestSchema,
  'sessions.status': SessionUserRequestSchema,
  'sessions.send': SessionSendRequestSchema,
  'sessions.logout': SessionUserRequestSchema,
  'sessions.pairing.request': PairingCodeRequestSchema,
  'sessions.pairing.cancel': SessionUserRequestSchema,
  'sessions.simulator.scan': SessionUserRequestSchema,
  'sessions.simulator.pair': SimulatorPairRequestSchema,
  'sessions.simulator.disconnect': SessionUserRequestSchema,
  'sessions.simulator.outbox': SessionUserRequestSchema,
  'sessions.simulator.inbound': SimulatorInboundRequestSchema,

  'jobs.idScheme': PingRequestSchema,
  'jobs.pacing': JobsUserRequestSchema,
  'jobs.start': StartJobRequestSchema,
  'jobs.status': JobStatusRequestSchema,
  'jobs.logs': JobLogsRequestSchema,
  'jobs.cancel': JobRefSchema,
  'jobs.pause': JobRefSchema,
  'jobs.resume': JobRefSchema,
  'jobs.policy.get': JobsUserRequestSchema,
  'jobs.sends.today': JobsUserRequestSchema,
  'jobs.policy.set': PolicySetRequestSchema,
  'jobs.results': JobResultsRequestSchema,
  'jobs.list': JobHistoryRequestSchema,
  'jobs.export': JobExportRequestSchema,
  'jobs.media.register': MediaRegisterRequestSchema,
  'jobs.media.get': MediaGetRequestSchema,
  'jobs.media.hold': MediaHoldRequestSchema,

  'jobs.optouts.list': OptOutListRequestSchema,
  'jobs.optouts.add': OptOutNumbersRequestSchema,
  'jobs.optouts.remove': OptOutRemoveRequestSchema,
  'jobs.optouts.export': OptOutExportRequestSchema,
  'jobs.optouts.check': OptOutNumbersRequestSchema,
  'jobs.optouts.settings.get': JobsUserRequestSchema,
  'jobs.optouts.settings.set': OptOutSettingsSetRequestSchema,

  'templates.list': TemplateListRequestSchema,
  'templates.create': TemplateCreateRequestSchema,
  'templates.update': TemplateUpdateRequestSchema,
  'templates.delete': TemplateRefSchema,
  'templates.duplicate': TemplateRefSchema,
  'templates.categories': TemplateUserRequestSchema,
  'templates.stats': TemplateUserRequestSchema,
  'templates.use': TemplateRefSchema,

  'dashboard.get': DashboardGetRequestSchema,
  'dashboard.preferences.get': PreferencesGetRequestSchema,
  'dashboard.preferences.set': PreferencesSetRequestSchema,

  'integrations.ping': PingRequestSchema,
  'integrations.keys.create': ApiKeyCreateRequestSchema,
  'integrations.keys.list': IntegrationsUserRequestSchema,
  'integrations.keys.revoke': ApiKeyRefSchema,
  'integrations.keys.verify': ApiKeyVerifyRequestSchema,
  'integrations.webhooks.create': WebhookCreateRequestSchema,
  'integrations.webhooks.list': IntegrationsUserRequestSchema,
  'integrations.webhooks.update': WebhookUpdateRequestSchema,
  'integrations.webhooks.delete': WebhookRefSchema,
  'integrations.webhooks.secret': WebhookRefSchema,
  'integrations.webhooks.rotate': WebhookRefSchema,
  'integrations.webhooks.test': WebhookRefSchema,
  'integrations.webhooks.deliveries': WebhookRefSchema,
  'integrations.webhooks.resend': DeliveryRefSchema,
  'integrations.messages.metadata.put': MessageMetadataPutRequestSchema,
  'integrations.messages.metadata.get': MessageMetadataRefSchema,
  'integrations.idempotency.begin': IdempotencyBeginRequestSchema,
  'integrations.idempotency.finish': IdempotencyFinishRequestSchema,
  'integrations.idempotency.release': IdempotencyReleaseRequestSchema,
  'integrations.account.delete': DeletionStartRequestSchema,
  'integrations.account.deletion': AccountUserRequestSchema,
  'integrations.account.retention.get': AccountUserRequestSchema,
  'integrations.account.retention.set': RetentionSetRequestSchema,
  'integrations.account.retention.page': RetentionPageRequestSchema,
  'integrations.audit.list': AuditListRequestSchema,

  'contacts.ping': PingRequestSchema,
  'contacts.list': ContactListRequestSchema,
  'contacts.create': ContactCreateRequestSchema,
  'contacts.update': ContactUpdateRequestSchema,
  'contacts.get': ContactRefSchema,
  'contacts.delete': ContactRefSchema,
  'contacts.bulk': ContactBulkRequestSchema,
  'contacts.import': ContactImportRequestSchema,
  'contacts.segments.create': SegmentCreateRequestSchema,
  'contacts.segments.list': ContactsUserRequestSchema,
  'contacts.segments.delete': SegmentRefSchema,
  'contacts.segments.count': SegmentRefSchema,
  'contacts.segments.preview': SegmentCreateRequestSchema,
  'contacts.segments.members': SegmentMembersRequestSchema,
  'contacts.conversations.list': ContactsUserRequestSchema,
  'contacts.conversations.get': ConversationRefSchema,
  'contacts.conversations.mark': ConversationMarkRequestSchema,
  'contacts.settings.get': ContactsUserRequestSchema,
  'contacts.settings.set': SettingsSetRequestSchema,
};

/** Every request key, from the registry (the compiler keeps it complete). */
export const REQUEST_KEYS = Object.keys(REQUEST_SCHEMAS) as RequestKey[];

/**
 * The code of a refused request: the sessions service has always answered its own
 * `SESSIONS_INVALID_REQUEST`; every other service answers the common `INVALID_REQUEST`.
 */
export function invalidRequestCodeOf(key: RequestKey): string {
  return isSharded(key) ? SessionsErrorCode.InvalidRequest : CommonErrorCode.InvalidRequest;
}

export type RequestCheck<K extends RequestKey> =
  | { ok: true; value: RequestOf<K> }
  | {
      ok: false;
      code: string;
      /** The first problem, in plain words naming its field. */
      message: string;
      /** Field (dotted path) → its first problem. */
      errors: Record<string, string>;
    };

/** One issue in our words (plainIssueMessage): a request that is not an object says so. */
const messageOf = (issue: z.core.$ZodIssue, input: unknown): string =>
  plainIssueMessage(issue, input, REQUEST_MESSAGES.requestNotObject);

/**
 * Checks an incoming request against its key's schema. A refusal names each field in plain words
 * (REQUEST_MESSAGES), with the code the owning service answers (`invalidRequestCodeOf`).
 */
export function checkRequest<K extends RequestKey>(key: K, input: unknown): RequestCheck<K> {
  const schema: z.ZodType<RequestOf<K>> = REQUEST_SCHEMAS[key];
  const result = schema.safeParse(input);
  if (result.success) return { ok: true, value: result.data };
  const errors: Record<string, string> = {};
  let message: string | undefined;
  for (const issue of result.error.issues) {
    const text = messageOf(issue, input);
    message ??= text;
    const field = issue.path.map(String).join('.').slice(0, ISSUE_FIELD_MAX);
    if (!(field in errors)) errors[field] = text;
  }
  return { ok: false, code: invalidRequestCodeOf(key), message: message ?? REQUEST_MESSAGES.badRequest, errors };
}
