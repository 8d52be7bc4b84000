import type { JobProgress } from '@bns/contracts';
import type { JobEntity } from './job.entity.js';

/** A job's counts as progress reports carry them; `skipped` only when some were (opted out, not on WhatsApp). */
export function progressOf(job: Pick<JobEntity, 'total' | 'sent' | 'failed' | 'skipped'>): JobProgress {
  return { total: job.total, sent: job.sent, failed: job.failed, ...(job.skipped > 0 ? { skipped: job.skipped } : {}) };
}
