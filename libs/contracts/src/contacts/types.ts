import type { z } from '../common/schema.js';
import type {
  ContactCreateSchema,
  ContactFactsSchema,
  ContactImportAnswerSchema,
  ContactListAnswerSchema,
  ContactListQuerySchema,
  ContactPatchSchema,
  ContactSchema,
  ConversationSchema,
  SegmentCreateSchema,
  SegmentRuleSchema,
  SegmentSchema,
  ThreadMessageSchema,
} from './schemas.js';

export type Contact = z.output<typeof ContactSchema>;
export type ContactFacts = z.output<typeof ContactFactsSchema>;
export type ContactInput = z.output<typeof ContactCreateSchema>;
export type ContactPatch = z.output<typeof ContactPatchSchema>;
export type ContactListQuery = z.output<typeof ContactListQuerySchema>;
export type ContactListAnswer = z.output<typeof ContactListAnswerSchema>;
export type ContactImportAnswer = z.output<typeof ContactImportAnswerSchema>;
export type SegmentRule = z.output<typeof SegmentRuleSchema>;
export type SegmentInput = z.output<typeof SegmentCreateSchema>;
export type Segment = z.output<typeof SegmentSchema>;
export type Conversation = z.output<typeof ConversationSchema>;
export type ThreadMessage = z.output<typeof ThreadMessageSchema>;

/** One recipient of a segment as a job start takes it: the phone and the contact's values as `{{variables}}`. */
export interface SegmentRecipient {
  phone: string;
  variables: Record<string, string>;
}
