import type { JobHistoryPage, JobProgress, JobResultsPage, JobStatus, RecipientResultStatus } from '@bns/contracts';
import { api } from '../../api/api.js';

export interface JobResultsArgs {
  jobId: string;
  statuses?: readonly RecipientResultStatus[];
  /** Digits of a number to find (8 digits, 852-prefixed or part of one): the server filters. */
  search?: string;
  cursor?: string | null;
  limit?: number;
}

export function jobResultsUrl({ jobId, statuses, search, cursor, limit }: JobResultsArgs): string {
  const q = new URLSearchParams();
  if (statuses && statuses.length > 0) q.set('status', statuses.join(','));
  if (search) q.set('q', search);
  if (cursor) q.set('cursor', cursor);
  if (limit) q.set('limit', String(limit));
  const qs = q.toString();
  return `job-results/${encodeURIComponent(jobId)}${qs ? `?${qs}` : ''}`;
}

/** The campaign results calls, injected into the app's one API. */
export const resultsApi = api.enhanceEndpoints({ addTagTypes: ['JobHistory'] }).injectEndpoints({
  endpoints: (build) => ({
    getJobResults: build.query<JobResultsPage, JobResultsArgs>({
      query: (args) => jobResultsUrl(args),
      transformResponse: (r: Partial<JobResultsPage> | undefined) => ({
        results: Array.isArray(r?.results) ? r.results : [],
        nextCursor: r?.nextCursor ?? null,
      }),
      keepUnusedDataFor: 0,
    }),
    getJobHistory: build.query<JobHistoryPage, { userId: string; cursor?: string | null; active?: boolean }>({
      query: ({ userId, cursor, active }) => {
        const params = new URLSearchParams();
        if (cursor) params.set('cursor', cursor);
        if (active) params.set('active', 'true');
        const q = params.toString();
        return `api/jobs/${encodeURIComponent(userId)}${q ? `?${q}` : ''}`;
      },
      transformResponse: (r: Partial<JobHistoryPage> | undefined) => ({
        jobs: Array.isArray(r?.jobs) ? r.jobs : [],
        nextCursor: r?.nextCursor ?? null,
      }),
      providesTags: ['JobHistory'],
    }),
  }),
});

export const { useGetJobHistoryQuery } = resultsApi;

/**
 * A job's progress as the socket pushed it, written into every cached page of the job list, so the
 * Campaigns card follows running jobs without asking the server. False when no cached page has the job
 * (a job started elsewhere: the list must be read again).
 */
export function patchJobHistory(
  dispatch: (action: ReturnType<typeof resultsApi.util.updateQueryData>) => unknown,
  // The store's state: typed by the app's RootState, which knows the api before these endpoints joined it.
  state: unknown,
  event: { jobId: string; status: JobStatus; progress: JobProgress },
): boolean {
  let found = false;
  for (const args of resultsApi.util.selectCachedArgsForQuery(
    state as Parameters<typeof resultsApi.util.selectCachedArgsForQuery>[0],
    'getJobHistory',
  )) {
    dispatch(
      resultsApi.util.updateQueryData('getJobHistory', args, (draft) => {
        const job = draft.jobs.find((j) => j.jobId === event.jobId);
        if (!job) return;
        found = true;
        job.status = event.status;
        // A progress event carries `skipped` only when some were: one without it keeps the count last seen.
        job.progress = {
          ...event.progress,
          ...(event.progress.skipped === undefined && job.progress.skipped ? { skipped: job.progress.skipped } : {}),
        };
      }),
    );
  }
  return found;
}
