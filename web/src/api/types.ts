/**
 * Types the web reads. Every answer's shape comes from @bns/contracts (the schema the gateway answers
 * with); only what no service defines (the sender's rows, the templates filter) is declared here.
 */
import type { Infer, SessionCleanupAnswerSchema, TemplateCategory } from '@bns/contracts';

export type {
  DashboardData,
  DashboardMessage,
  JobLogEntry as JobLog,
  JobRecipientInput,
  JobPacingReply as JobPacing,
  JobView,
  MonthlyUsage,
  StartJobAnswer,
  StartJobBody,
} from '@bns/contracts';

/** A recipient as the sender keeps it: 8 digits and the variables of its file row. */
export interface Recipient {
  phone: string;
  variables: Record<string, string>;
  /** The spreadsheet row it came from (as the upload panel shows it); none for a number typed by hand. */
  row?: number;
}

export interface TemplateFilters {
  category: TemplateCategory | 'all';
  favoritesOnly: boolean;
}

/** `POST /api/session/cleanup`: all cleaned up, or a partial cleanup (`partial`, with the steps that failed). */
export type CleanupAnswer = Infer<typeof SessionCleanupAnswerSchema>;
