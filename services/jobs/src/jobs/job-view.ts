import { createHash } from 'node:crypto';
import { JOB_STATUS_SHAPE, type JobView } from '@bns/contracts';
import { progressOf } from '../store/job-progress.js';
import type { JobSummary } from '../store/jobs.repository.js';

/** A job's answer without its result lists: everything it shows from the job's own row (and its lane's next slot). */
export type JobHead = Omit<JobView, 'results'>;

export function jobHeadOf(job: JobSummary): JobHead {
  return {
    jobId: job.id,
    status: job.status,
    progress: progressOf(job),
    error: job.error,
    estimatedTime: job.estimatedMinutes,
    nextSendAt: job.nextSendAt ? job.nextSendAt.toISOString() : null,
    createdAt: job.createdAt.toISOString(),
    startedAt: job.startedAt?.toISOString() ?? null,
    finishedAt: job.finishedAt?.toISOString() ?? null,
    startAt: job.startAt?.toISOString() ?? null,
    pausedReason: job.pausedReason,
    resumesAt: job.resumesAt?.toISOString() ?? null,
    estimatedFinishAt: job.estimatedFinishAt?.toISOString() ?? null,
    ...(job.attachment ? { attachment: job.attachment } : {}),
  };
}

/**
 * The whole answer as JSON text, in the order it has always been sent (jobId, status, progress,
 * results, then the rest of the head), with `resultsJson` (the results object's text, from Postgres)
 * spliced in as it is.
 */
export function jobJsonOf(head: JobHead, resultsJson: string): string {
  const { jobId, status, progress, ...rest } = head;
  const first = JSON.stringify({ jobId, status, progress });
  const last = JSON.stringify(rest);
  return `${first.slice(0, -1)},"results":${resultsJson}${last === '{}' ? '}' : `,${last.slice(1)}`}`;
}

/**
 * The version of a job-status answer (its weak ETag): a digest of everything the answer can differ by
 * for the same stored data, taken from the answer's head as it is rendered, so a field added there is
 * in the version without anyone thinking of it. The result lists are not read for it: they only grow,
 * and every write that adds to one counts it in the same statement or transaction (`sent`, `failed`,
 * `skipped` are in `progress`), so equal counts mean equal lists. `listMax` is how many entries each
 * list holds (JOB_STATUS_LIST_MAX); the shape covers the rest of how the answer is built. The user
 * and job are in it, so two jobs never share a version.
 */
export function jobStatusVersion(userId: string, head: JobHead, listMax: number): string {
  return createHash('sha256')
    .update(JSON.stringify([JOB_STATUS_SHAPE, listMax, userId, head]))
    .digest('base64url')
    .slice(0, 22);
}
