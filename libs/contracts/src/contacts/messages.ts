import { CONTACTS_LIMITS } from './limits.js';

const L = CONTACTS_LIMITS;

/** Texts of the contact book, segments and inbox. */
export const CONTACT_MESSAGES = {
  bodyNotObject: 'The contact must be a JSON object',
  phoneRequired: 'phone is required',
  phoneInvalid: 'phone must be an 8-digit Hong Kong number (852 or +852 in front is fine)',
  nameInvalid: `name must be text of at most ${L.nameMax} characters`,
  fieldsInvalid: `fields must be an object of at most ${L.fieldsMax} names (letters, digits, _; not starting with a digit; up to ${L.fieldKeyMax} characters) to text of at most ${L.fieldValueMax} characters`,
  tagsInvalid: `tags must be a list of at most ${L.tagsMax} words, each 1 to ${L.tagMax} characters`,
  notFound: 'Contact not found',
  alreadyExists: 'A contact with this number already exists',
  limitReached: `You can keep up to ${L.contactsPerUserMax.toLocaleString('en-US')} contacts. Delete some to add more.`,
  importTooBig: (rows: number) =>
    `This import would take the book to ${rows.toLocaleString('en-US')} contacts; the most is ${L.contactsPerUserMax.toLocaleString('en-US')}. Nothing was imported.`,
  rowsInvalid: `rows must be a list of at most ${L.importRowsMax.toLocaleString('en-US')} contacts, each {phone, name?, fields?, tags?}`,
  importExpired: 'The import was not found (it took too long): send it again',
  queryInvalid: 'The search is not valid',
  cursorInvalid: 'cursor is not valid: use the nextCursor of the previous page',
  limitInvalid: `limit must be a whole number from 1 to ${L.listPageMax}`,
  searchInvalid: `q must be text of at most ${L.searchMax} characters`,
  tagInvalid: `tag must be text of at most ${L.tagMax} characters`,
  segmentNotObject: 'Send {name, rule}',
  segmentNameInvalid: `name is required: text of at most ${L.segmentNameMax} characters`,
  segmentRuleInvalid:
    'rule must be {tags?: {anyOf?, allOf?, noneOf?}, fields?: [{key, op: equals|contains|isEmpty, value?}], facts?: [{fact, ...}]}',
  segmentNotFound: 'Segment not found',
  segmentLimitReached: `You can keep up to ${L.segmentsPerUserMax} segments. Delete one to add another.`,
  conversationPhoneInvalid: 'The number must be 8 Hong Kong digits, or 852 followed by them',
  answerTextRequired: 'Write an answer first',
  answerTextTooLong: 'The answer must be 1000 characters or less',
  segmentAndNumbers: 'Send segmentId or the numbers, not both',
  segmentIdInvalid: 'segmentId must be the id of one of your segments',
  bulkNotObject: 'Send {action: tag|untag|delete, tags?, ids? or segmentId?}',
  bulkActionInvalid: 'action must be tag, untag or delete',
  bulkSelectionInvalid: `Choose the contacts: ids (a list of at most ${L.bulkIdsMax.toLocaleString('en-US')} contact ids) or segmentId, not both`,
  bulkTagsRequired: 'Name the tags to add or remove',
  conversationNotFound: 'No conversation with this number',
  followUpLoaded: (count: number, who: string) =>
    `${count.toLocaleString('en-US')} contacts who ${who} are in the sender: write the follow-up and review it`,
  followUpEmpty: (who: string) => `No contact in your book ${who}: nothing to follow up`,
  fallbackUsed: (name: string, count: number, fallback: string) =>
    `{{${name}}} is empty for ${count.toLocaleString('en-US')} recipient${count === 1 ? '' : 's'}: they get “${fallback}”`,
  markInvalid: 'Send {unread: true} or {unread: false}',
} as const;
