import {
  createApi,
  fetchBaseQuery,
  type BaseQueryFn,
  type FetchArgs,
  type FetchBaseQueryError,
} from '@reduxjs/toolkit/query/react';
import {
  IDEMPOTENCY_KEY_HEADER,
  MEDIA_UPLOAD_FIELD,
  duplicateTemplateInput,
  templateListQueryString,
  type MediaView,
  type Template,
  type TemplateCategoryCount,
  type TemplateInput,
  type TemplateStats,
  type UserPreferences,
} from '@bns/contracts';
import { getToken } from './token.js';
import type {
  CleanupAnswer,
  DashboardData,
  JobLog,
  JobPacing,
  JobView,
  StartJobAnswer,
  StartJobBody,
  TemplateFilters,
} from './types.js';

let onUnauthorized: () => void = () => undefined;
/** Called once a call answers 401 (the token expired or was revoked): the app signs the user out. */
export function setUnauthorizedHandler(handler: () => void): void {
  onUnauthorized = handler;
}

let unauthorizedPaused = false;
/**
 * While an account deletion runs, every token issued before it is refused: the 401s that follow are
 * expected and must not sign the user out before the deletion's progress and confirmation are shown.
 */
export function pauseUnauthorized(paused: boolean): void {
  unauthorizedPaused = paused;
}

const rawBaseQuery = fetchBaseQuery({
  // Same origin as the page: the gateway serves both the app and the API.
  baseUrl: `${globalThis.location?.origin ?? ''}/`,
  prepareHeaders: async (headers) => {
    const token = await getToken();
    if (token) headers.set('Authorization', `Bearer ${token}`);
    return headers;
  },
});

/** Also treats a 200 answer of `{success: false, error}` (the dashboard's failure shape) as an error. */
const baseQuery: BaseQueryFn<string | FetchArgs, unknown, FetchBaseQueryError> = async (args, api, extra) => {
  const result = await rawBaseQuery(args, api, extra);
  if (result.error?.status === 401 && !unauthorizedPaused) onUnauthorized();
  const data = result.data as { success?: unknown; error?: unknown } | undefined;
  if (!result.error && data && data.success === false) {
    return { error: { status: 'CUSTOM_ERROR', error: String(data.error ?? 'Request failed'), data } };
  }
  return result;
};

let optimisticIds = 0;

function templatesUrl(userId: string, filters: TemplateFilters): string {
  return `api/templates/${encodeURIComponent(userId)}${templateListQueryString({
    ...(filters.category !== 'all' ? { category: filters.category } : {}),
    ...(filters.favoritesOnly ? { is_favorite: true } : {}),
  })}`;
}

function matchesFilters(t: Pick<Template, 'category' | 'is_favorite'>, filters: TemplateFilters): boolean {
  return (filters.category === 'all' || t.category === filters.category) && (!filters.favoritesOnly || t.is_favorite);
}

/** The one API of the app (SPEC §7 plus cancel-job and the dev simulator probe). */
export const api = createApi({
  reducerPath: 'api',
  baseQuery,
  tagTypes: ['Dashboard', 'Template', 'TemplateStats', 'Job', 'Simulator'],
  endpoints: (build) => ({
    // Dashboard
    getDashboard: build.query<DashboardData, string>({
      query: (userId) => `api/dashboard/${encodeURIComponent(userId)}`,
      transformResponse: (r: { data: DashboardData }) => r.data,
      providesTags: ['Dashboard'],
    }),
    setPreferences: build.mutation<UserPreferences, { userId: string; preferences: UserPreferences }>({
      query: ({ userId, preferences }) => ({
        url: 'api/user/preferences',
        method: 'POST',
        body: { clerkUserId: userId, preferences },
      }),
      transformResponse: (r: { preferences: UserPreferences }) => r.preferences,
      async onQueryStarted({ userId, preferences }, { dispatch, queryFulfilled }) {
        const patch = dispatch(
          api.util.updateQueryData('getDashboard', userId, (draft) => {
            draft.user.preferences = { ...draft.user.preferences, ...preferences };
          }),
        );
        try {
          await queryFulfilled;
        } catch {
          patch.undo();
        }
      },
    }),

    // Templates
    getTemplates: build.query<Template[], { userId: string; filters: TemplateFilters }>({
      query: ({ userId, filters }) => templatesUrl(userId, filters),
      transformResponse: (r: { templates: Template[] }) => r.templates,
      providesTags: (result) => [
        { type: 'Template', id: 'LIST' },
        ...(result ?? []).map((t) => ({ type: 'Template' as const, id: t.id })),
      ],
    }),
    getTemplateStats: build.query<TemplateStats, string>({
      query: (userId) => `api/templates/${encodeURIComponent(userId)}/stats`,
      transformResponse: (r: { stats: TemplateStats }) => r.stats,
      providesTags: ['TemplateStats'],
    }),
    getTemplateCategories: build.query<TemplateCategoryCount[], string>({
      query: (userId) => `api/templates/${encodeURIComponent(userId)}/categories`,
      transformResponse: (r: { categories: TemplateCategoryCount[] }) => r.categories,
      providesTags: ['TemplateStats'],
    }),
    /** With `idempotencyKey`, saving the same new template again answers the one stored, never a second. */
    createTemplate: build.mutation<Template, { userId: string; input: TemplateInput; idempotencyKey?: string }>({
      query: ({ userId, input, idempotencyKey }) => ({
        url: `api/templates/${encodeURIComponent(userId)}`,
        method: 'POST',
        body: input,
        headers: idempotencyKey ? { [IDEMPOTENCY_KEY_HEADER]: idempotencyKey } : {},
      }),
      transformResponse: (r: { template: Template }) => r.template,
      invalidatesTags: [{ type: 'Template', id: 'LIST' }, 'TemplateStats'],
    }),
    updateTemplate: build.mutation<Template, { userId: string; id: string; patch: Partial<TemplateInput> }>({
      query: ({ userId, id, patch }) => ({
        url: `api/templates/${encodeURIComponent(userId)}/${encodeURIComponent(id)}`,
        method: 'PUT',
        body: patch,
      }),
      transformResponse: (r: { template: Template }) => r.template,
      invalidatesTags: (_r, _e, { id }) => [
        { type: 'Template', id },
        { type: 'Template', id: 'LIST' },
        'TemplateStats',
      ],
    }),
    /** Only is_favorite, applied at once to every cached list and undone if the server refuses. */
    setFavorite: build.mutation<Template, { userId: string; id: string; is_favorite: boolean }>({
      query: ({ userId, id, is_favorite }) => ({
        url: `api/templates/${encodeURIComponent(userId)}/${encodeURIComponent(id)}`,
        method: 'PUT',
        body: { is_favorite },
      }),
      transformResponse: (r: { template: Template }) => r.template,
      invalidatesTags: ['TemplateStats'],
      async onQueryStarted({ userId, id, is_favorite }, { dispatch, getState, queryFulfilled }) {
        const patches = api.util.selectCachedArgsForQuery(getState(), 'getTemplates').flatMap((args) =>
          args.userId !== userId
            ? []
            : [
                dispatch(
                  api.util.updateQueryData('getTemplates', args, (draft) => {
                    const t = draft.find((x) => x.id === id);
                    if (t) t.is_favorite = is_favorite;
                    // A list of favorites only loses the card at once, as the server's list would.
                    if (args.filters.favoritesOnly && !is_favorite) return draft.filter((x) => x.id !== id);
                  }),
                ),
              ],
        );
        try {
          await queryFulfilled;
        } catch {
          for (const p of patches) p.undo();
        }
      },
    }),
    /** A create of "<name> (Copy)"; the copy shows at once and disappears again if the server refuses. */
    duplicateTemplate: build.mutation<Template, { userId: string; source: Template }>({
      query: ({ userId, source }) => ({
        url: `api/templates/${encodeURIComponent(userId)}`,
        method: 'POST',
        body: duplicateTemplateInput(source),
      }),
      transformResponse: (r: { template: Template }) => r.template,
      invalidatesTags: [{ type: 'Template', id: 'LIST' }, 'TemplateStats'],
      async onQueryStarted({ userId, source }, { dispatch, getState, queryFulfilled }) {
        const now = new Date().toISOString();
        // The copy keeps the source's attachment (`mediaId` absent when none, as the server answers).
        const { mediaId: _sameAttachment, ...input } = duplicateTemplateInput(source);
        const copy: Template = {
          ...source,
          ...input,
          id: `optimistic-${++optimisticIds}`,
          usage_count: 0,
          created_at: now,
          updated_at: now,
        };
        const patches = api.util.selectCachedArgsForQuery(getState(), 'getTemplates').flatMap((args) =>
          args.userId !== userId || !matchesFilters(copy, args.filters)
            ? []
            : [
                dispatch(
                  api.util.updateQueryData('getTemplates', args, (draft) => {
                    draft.unshift(copy);
                  }),
                ),
              ],
        );
        try {
          await queryFulfilled;
        } catch {
          for (const p of patches) p.undo();
        }
      },
    }),
    deleteTemplate: build.mutation<void, { userId: string; id: string }>({
      query: ({ userId, id }) => ({
        url: `api/templates/${encodeURIComponent(userId)}/${encodeURIComponent(id)}`,
        method: 'DELETE',
      }),
      transformResponse: () => undefined,
      invalidatesTags: (_r, _e, { id }) => [
        { type: 'Template', id },
        { type: 'Template', id: 'LIST' },
        'TemplateStats',
      ],
    }),
    useTemplate: build.mutation<Template | undefined, { userId: string; id: string }>({
      query: ({ userId, id }) => ({
        url: `api/templates/${encodeURIComponent(userId)}/${encodeURIComponent(id)}/use`,
        method: 'POST',
      }),
      transformResponse: (r: { template?: Template }) => r.template,
      invalidatesTags: (_r, _e, { id }) => [{ type: 'Template', id }, 'TemplateStats'],
    }),

    // Attachments
    /** One file, multipart (field `file`): the server reads its type from its bytes and may refuse it in words. */
    uploadMedia: build.mutation<MediaView, File>({
      query: (file) => {
        const form = new FormData();
        form.append(MEDIA_UPLOAD_FIELD, file, file.name);
        return { url: 'api/media', method: 'POST', body: form };
      },
    }),
    getMedia: build.query<MediaView, string>({
      query: (mediaId) => `api/media/${encodeURIComponent(mediaId)}`,
    }),

    // Jobs
    /** One confirmed send = one Idempotency-Key: a retry with the same key returns the same job. */
    startBulkMessages: build.mutation<StartJobAnswer, StartJobBody & { idempotencyKey?: string }>({
      query: ({ idempotencyKey, ...body }) => ({
        url: 'start-bulk-messages',
        method: 'POST',
        body,
        headers: idempotencyKey ? { [IDEMPOTENCY_KEY_HEADER]: idempotencyKey } : {},
      }),
    }),
    getJobStatus: build.query<JobView, string>({
      query: (jobId) => `job-status/${encodeURIComponent(jobId)}`,
      transformResponse: (r: { job: JobView }) => r.job,
      keepUnusedDataFor: 0,
    }),
    getJobLogs: build.query<JobLog[], { jobId: string; since?: string }>({
      query: ({ jobId, since }) =>
        `job-logs/${encodeURIComponent(jobId)}${since ? `?since=${encodeURIComponent(since)}` : ''}`,
      transformResponse: (r: { logs: JobLog[] }) => r.logs,
      keepUnusedDataFor: 0,
    }),
    /** The jobs service's configured delay: the confirm's estimate is the one the start will answer. */
    getJobPacing: build.query<JobPacing, void>({
      query: () => 'api/jobs/pacing',
      transformResponse: (r: JobPacing) => ({ sendDelayMs: r.sendDelayMs, sendJitterMs: r.sendJitterMs }),
    }),
    cancelJob: build.mutation<unknown, string>({
      query: (jobId) => ({ url: `cancel-job/${encodeURIComponent(jobId)}`, method: 'POST' }),
    }),

    // Sessions
    cleanupSession: build.mutation<CleanupAnswer, string>({
      query: (userId) => ({ url: 'api/session/cleanup', method: 'POST', body: { clerkUserId: userId } }),
    }),
    /** The dev simulator answers only with WA_ENGINE=simulated (404 otherwise): drives the badge. */
    getSimulatorOutbox: build.query<{ messages: unknown[] }, void>({
      query: () => 'dev/simulator/outbox',
      providesTags: ['Simulator'],
    }),
    /** Dev only (simulated engine): the phone scans the QR code showing. */
    simulatorScan: build.mutation<{ phoneNumber?: string }, void>({
      query: () => ({ url: 'dev/simulator/scan', method: 'POST' }),
    }),
    /** Dev only (simulated engine): the phone enters the pairing code showing. */
    simulatorPair: build.mutation<{ phoneNumber?: string }, { code: string }>({
      query: (body) => ({ url: 'dev/simulator/pair', method: 'POST', body }),
    }),
    /** Dev only (simulated engine): the phone unlinks this device. */
    simulatorUnlink: build.mutation<unknown, void>({
      query: () => ({ url: 'dev/simulator/disconnect', method: 'POST' }),
    }),
    /** Dev only (simulated engine): a contact replies to the linked account. */
    simulatorInbound: build.mutation<unknown, { from: string; text: string }>({
      query: (body) => ({ url: 'dev/simulator/inbound', method: 'POST', body }),
    }),
  }),
});

export const {
  useGetDashboardQuery,
  useSetPreferencesMutation,
  useGetTemplatesQuery,
  useGetTemplateStatsQuery,
  useGetTemplateCategoriesQuery,
  useCreateTemplateMutation,
  useUpdateTemplateMutation,
  useSetFavoriteMutation,
  useDuplicateTemplateMutation,
  useDeleteTemplateMutation,
  useUseTemplateMutation,
  useUploadMediaMutation,
  useGetMediaQuery,
  useCancelJobMutation,
  useGetSimulatorOutboxQuery,
  useGetJobPacingQuery,
  useSimulatorScanMutation,
  useSimulatorPairMutation,
  useSimulatorUnlinkMutation,
  useSimulatorInboundMutation,
} = api;
