import type { AuditKind, AuditPage, DeletionStarted, Retention } from '@bns/contracts';
import { api } from '../../api/api.js';

/** Settings › Account & data: the retention setting, the audit log and the deletion request. */
export const accountApi = api.enhanceEndpoints({ addTagTypes: ['Retention', 'Audit'] }).injectEndpoints({
  endpoints: (build) => ({
    getRetention: build.query<Retention, void>({
      query: () => 'api/account/retention',
      providesTags: ['Retention'],
    }),
    setRetention: build.mutation<Retention, Retention['days']>({
      query: (days) => ({ url: 'api/account/retention', method: 'PUT', body: { days } }),
      async onQueryStarted(days, { dispatch, queryFulfilled }) {
        const patch = dispatch(accountApi.util.updateQueryData('getRetention', undefined, (r) => ({ ...r, days })));
        try {
          await queryFulfilled;
        } catch {
          patch.undo();
        }
      },
    }),
    getAudit: build.query<AuditPage, { kind?: AuditKind; cursor?: string }>({
      query: ({ kind, cursor }) => {
        const q = new URLSearchParams({ limit: '20' });
        if (kind) q.set('kind', kind);
        if (cursor) q.set('cursor', cursor);
        return `api/audit?${q.toString()}`;
      },
      providesTags: ['Audit'],
    }),
    deleteAccount: build.mutation<DeletionStarted, string>({
      query: (email) => ({ url: 'api/account', method: 'DELETE', body: { email } }),
    }),
  }),
});

export const { useGetRetentionQuery, useSetRetentionMutation, useGetAuditQuery, useDeleteAccountMutation } = accountApi;
