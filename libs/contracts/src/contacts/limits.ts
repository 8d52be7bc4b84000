import { LIMITS } from '../common/limits.js';

/**
 * The contact book's numbers, once: the contacts service, the gateway and the web read them from here.
 */
export const CONTACTS_LIMITS = {
  /** Contacts one user may keep. */
  contactsPerUserMax: 200_000,
  nameMax: 200,
  /** Custom fields of one contact; each key is a `{{variable}}` name. */
  fieldsMax: 50,
  fieldKeyMax: LIMITS.variableNameMaxLength,
  fieldValueMax: LIMITS.messageMaxLength,
  tagsMax: 50,
  tagMax: 50,
  listPageDefault: 50,
  listPageMax: 200,
  searchMax: 100,
  /** Rows one import takes (the whole book at once). */
  importRowsMax: 200_000,
  /** Rows in one multi-row upsert statement of an import. */
  importStatementRows: 2_000,
  /**
   * An import that writes at least this many rows refreshes the planner's statistics when it commits: a
   * search right after a big import would otherwise be planned as if the book were still small.
   */
  importAnalyzeRows: 10_000,
  /** Import bodies above this many bytes are staged in the JetStream object store, not sent in the request. */
  stageAboveBytes: 512 * 1024,
  /** A staged import body older than this is dropped by the store. */
  stagedTtlMs: 3600_000,
  segmentsPerUserMax: 100,
  segmentNameMax: 100,
  /** Conditions of each kind one segment rule holds. */
  ruleConditionsMax: 20,
  ruleTagsMax: 50,
  /** Recipients of a segment answered per request when a campaign starts (each page fits one NATS message). */
  membersPage: 5_000,
  /** Contacts one bulk tag, untag or delete names by id (a segment has no such bound). */
  bulkIdsMax: 1_000,
  /** Rows one bulk statement changes: a segment of the whole book goes in steps this size, no long locks. */
  bulkStatementRows: 5_000,
  conversationsPageMax: 100,
  threadMessagesMax: 200,
  /** Characters of an inbound or outbound text kept for the inbox. */
  conversationTextMax: 4096,
} as const;

/** JetStream object store bucket holding import bodies too big for one NATS message. */
export const STAGED_IMPORTS_BUCKET = 'contacts-imports';

/** Where a contact came from. */
export const CONTACT_SOURCES = ['import', 'campaign', 'api', 'reply'] as const;
export type ContactSource = (typeof CONTACT_SOURCES)[number];
