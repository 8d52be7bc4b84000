/**
 * Answer shapes the web reads. The services' own types come from @bns/contracts; only what no service
 * defines (the web's filter state, the cleanup and start answers) is declared here.
 */
import type { CleanupFailure, TemplateCategory } from '@bns/contracts';

export type {
  DashboardData,
  DashboardMessage,
  JobLogEntry as JobLog,
  JobRecipientInput,
  JobView,
  MonthlyUsage,
  StartJobBody,
} from '@bns/contracts';

/** A recipient as the sender keeps it: 8 digits and the variables of its file row. */
export interface Recipient {
  phone: string;
  variables: Record<string, string>;
  /** The spreadsheet row it came from (as the upload panel shows it); none for a number typed by hand. */
  row?: number;
}

export interface StartJobAnswer {
  success: boolean;
  jobId: string;
  estimatedTime: number;
}

export interface TemplateFilters {
  category: TemplateCategory | 'all';
  favoritesOnly: boolean;
}

export interface CleanupAnswer {
  success: boolean;
  sessionsCleanedUp: number;
  message?: string;
  /** A partial cleanup: some steps failed (`error` says which), the rest ran. */
  partial?: boolean;
  error?: string;
  failures?: CleanupFailure[];
}

export interface JobPacing {
  sendDelayMs: number;
  sendJitterMs: number;
}
