import type { JobView, PolicyUpdate, SendingPolicy, SendsToday } from '@bns/contracts';
import { api } from '../../api/api.js';

/** The sending policy and pause/resume calls, added to the app's one API. */
export const pacingApi = api.enhanceEndpoints({ addTagTypes: ['SendingPolicy'] }).injectEndpoints({
  endpoints: (build) => ({
    getSendingPolicy: build.query<SendingPolicy, string>({
      query: (userId) => `api/sending-policy/${encodeURIComponent(userId)}`,
      transformResponse: (r: { policy: SendingPolicy }) => r.policy,
      providesTags: ['SendingPolicy'],
    }),
    setSendingPolicy: build.mutation<SendingPolicy, { userId: string; update: PolicyUpdate }>({
      query: ({ userId, update }) => ({
        url: `api/sending-policy/${encodeURIComponent(userId)}`,
        method: 'PUT',
        body: update,
      }),
      transformResponse: (r: { policy: SendingPolicy }) => r.policy,
      async onQueryStarted({ userId }, { dispatch, queryFulfilled }) {
        const { data } = await queryFulfilled.catch(() => ({ data: undefined }));
        if (data) void dispatch(pacingApi.util.upsertQueryData('getSendingPolicy', userId, data));
      },
    }),
    getSendsToday: build.query<SendsToday, string>({
      query: (userId) => `api/sends-today/${encodeURIComponent(userId)}`,
      transformResponse: (r: { today: SendsToday }) => r.today,
      // A policy change moves the cap and the limit.
      providesTags: ['SendingPolicy'],
    }),
    pauseJob: build.mutation<JobView, string>({
      query: (jobId) => ({ url: `pause-job/${encodeURIComponent(jobId)}`, method: 'POST' }),
      transformResponse: (r: { job: JobView }) => r.job,
    }),
    resumeJob: build.mutation<JobView, string>({
      query: (jobId) => ({ url: `resume-job/${encodeURIComponent(jobId)}`, method: 'POST' }),
      transformResponse: (r: { job: JobView }) => r.job,
    }),
  }),
});

export const {
  useGetSendingPolicyQuery,
  useGetSendsTodayQuery,
  useSetSendingPolicyMutation,
  usePauseJobMutation,
  useResumeJobMutation,
} = pacingApi;
