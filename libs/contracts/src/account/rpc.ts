import type { AuditListRequest, AuditPage } from './audit.js';
import type {
  AccountUserRequest,
  DeletionStarted,
  DeletionStartRequest,
  DeletionStatus,
  Retention,
  RetentionPage,
  RetentionPageRequest,
  RetentionSetRequest,
} from './types.js';

/** Requests of the account-and-data rules; the deletion coordinator and the retention setting live in integrations. */
export interface AccountRequests {
  /** Starts the user's deletion, or answers the one already running (idempotent). */
  'integrations.account.delete': { request: DeletionStartRequest; reply: DeletionStarted };
  /** The user's latest deletion (404 when none was requested); kept after the data is gone. */
  'integrations.account.deletion': { request: AccountUserRequest; reply: DeletionStatus };
  'integrations.account.retention.get': { request: AccountUserRequest; reply: Retention };
  'integrations.account.retention.set': { request: RetentionSetRequest; reply: Retention };
  /** Every stored setting, by user id a page at a time: each owner's purge reads them first. */
  'integrations.account.retention.page': { request: RetentionPageRequest; reply: RetentionPage };
  /** A page of the user's audit log, newest first. */
  'integrations.audit.list': { request: AuditListRequest; reply: AuditPage };
}
