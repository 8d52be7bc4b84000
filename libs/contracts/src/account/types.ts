import type { z } from '../common/schema.js';
import type {
  AccountUserRequestSchema,
  DeletionStartedSchema,
  DeletionStartRequestSchema,
  DeletionStatusSchema,
  RetentionPageRequestSchema,
  RetentionPageSchema,
  RetentionSchema,
  RetentionSetRequestSchema,
  UserDeletionReceiptEventSchema,
  UserDeletionRequestedEventSchema,
} from './schemas.js';

export type AccountUserRequest = z.output<typeof AccountUserRequestSchema>;
export type DeletionStartRequest = z.output<typeof DeletionStartRequestSchema>;
export type DeletionStarted = z.output<typeof DeletionStartedSchema>;
export type DeletionStatus = z.output<typeof DeletionStatusSchema>;
export type UserDeletionRequestedEvent = z.output<typeof UserDeletionRequestedEventSchema>;
export type UserDeletionReceiptEvent = z.output<typeof UserDeletionReceiptEventSchema>;
export type Retention = z.output<typeof RetentionSchema>;
export type RetentionSetRequest = z.output<typeof RetentionSetRequestSchema>;
export type RetentionPageRequest = z.output<typeof RetentionPageRequestSchema>;
export type RetentionPage = z.output<typeof RetentionPageSchema>;
