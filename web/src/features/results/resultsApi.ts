import type { JobHistoryPage, JobResultsPage, RecipientResultStatus } from '@bns/contracts';
import { api } from '../../api/api.js';

export interface JobResultsArgs {
  jobId: string;
  statuses?: readonly RecipientResultStatus[];
  cursor?: string | null;
  limit?: number;
}

export function jobResultsUrl({ jobId, statuses, cursor, limit }: JobResultsArgs): string {
  const q = new URLSearchParams();
  if (statuses && statuses.length > 0) q.set('status', statuses.join(','));
  if (cursor) q.set('cursor', cursor);
  if (limit) q.set('limit', String(limit));
  const qs = q.toString();
  return `job-results/${encodeURIComponent(jobId)}${qs ? `?${qs}` : ''}`;
}

/** The campaign results calls (issue 14), injected into the app's one API. */
export const resultsApi = api.injectEndpoints({
  endpoints: (build) => ({
    getJobResults: build.query<JobResultsPage, JobResultsArgs>({
      query: (args) => jobResultsUrl(args),
      transformResponse: (r: Partial<JobResultsPage> | undefined) => ({ results: Array.isArray(r?.results) ? r.results : [], nextCursor: r?.nextCursor ?? null }),
      keepUnusedDataFor: 0,
    }),
    getJobHistory: build.query<JobHistoryPage, { userId: string; cursor?: string | null }>({
      query: ({ userId, cursor }) => `api/jobs/${encodeURIComponent(userId)}${cursor ? `?cursor=${encodeURIComponent(cursor)}` : ''}`,
      transformResponse: (r: Partial<JobHistoryPage> | undefined) => ({ jobs: Array.isArray(r?.jobs) ? r.jobs : [], nextCursor: r?.nextCursor ?? null }),
    }),
  }),
});

export const { useGetJobHistoryQuery } = resultsApi;
