import type { OptOutCheckReply, OptOutListReply, OptOutSettings, OptOutSettingsPatch } from '@bns/contracts';
import { api } from '../../api/api.js';

export interface OptOutPageArgs {
  userId: string;
  q: string;
  cursor: string | null;
  limit: number;
}

const base = (userId: string) => `api/opt-outs/${encodeURIComponent(userId)}`;

/** The opt-outs calls, injected into the app's one API (tags added here, so api.ts stays as it is). */
export const optOutsApi = api.enhanceEndpoints({ addTagTypes: ['OptOuts', 'OptOutSettings'] }).injectEndpoints({
  endpoints: (build) => ({
    getOptOuts: build.query<OptOutListReply, OptOutPageArgs>({
      query: ({ userId, q, cursor, limit }) => {
        const params = new URLSearchParams({ limit: String(limit) });
        if (q) params.set('q', q);
        if (cursor) params.set('cursor', cursor);
        return `${base(userId)}?${params.toString()}`;
      },
      transformResponse: (r: Partial<OptOutListReply>) => ({
        optOuts: r.optOuts ?? [],
        nextCursor: r.nextCursor ?? null,
        total: r.total ?? 0,
      }),
      providesTags: ['OptOuts'],
    }),
    addOptOuts: build.mutation<{ added: number; alreadyListed: number }, { userId: string; phoneNumbers: string[] }>({
      query: ({ userId, phoneNumbers }) => ({ url: base(userId), method: 'POST', body: { phoneNumbers } }),
      invalidatesTags: ['OptOuts'],
    }),
    removeOptOut: build.mutation<{ success: boolean }, { userId: string; phone: string }>({
      query: ({ userId, phone }) => ({ url: `${base(userId)}/${encodeURIComponent(phone)}`, method: 'DELETE' }),
      invalidatesTags: ['OptOuts'],
    }),
    getOptOutSettings: build.query<OptOutSettings, string>({
      query: (userId) => `${base(userId)}/settings`,
      transformResponse: (r: { settings: OptOutSettings }) => r.settings,
      providesTags: ['OptOutSettings'],
    }),
    setOptOutSettings: build.mutation<OptOutSettings, { userId: string; settings: OptOutSettingsPatch }>({
      query: ({ userId, settings }) => ({ url: `${base(userId)}/settings`, method: 'PUT', body: settings }),
      transformResponse: (r: { settings: OptOutSettings }) => r.settings,
      async onQueryStarted({ userId }, { dispatch, queryFulfilled }) {
        try {
          const { data } = await queryFulfilled;
          void dispatch(optOutsApi.util.upsertQueryData('getOptOutSettings', userId, data));
        } catch {
          // the card shows the refusal; the cached settings stay as they were
        }
      },
    }),
    /** Which of the recipients would be skipped (the review step). */
    checkOptOuts: build.query<OptOutCheckReply, { userId: string; phoneNumbers: readonly string[] }>({
      query: ({ userId, phoneNumbers }) => ({ url: `${base(userId)}/check`, method: 'POST', body: { phoneNumbers } }),
      transformResponse: (r: Partial<OptOutCheckReply>) => ({
        optedOut: r.optedOut ?? [],
        notOnWhatsApp: r.notOnWhatsApp ?? [],
      }),
      providesTags: ['OptOuts'],
    }),
  }),
});

export const {
  useGetOptOutsQuery,
  useAddOptOutsMutation,
  useRemoveOptOutMutation,
  useGetOptOutSettingsQuery,
  useSetOptOutSettingsMutation,
  useCheckOptOutsQuery,
} = optOutsApi;
