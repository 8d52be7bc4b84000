import type {
  ApiKey,
  ApiKeyCreate,
  ApiKeyCreated,
  Webhook,
  WebhookCreate,
  WebhookDelivery,
  WebhookWithSecret,
} from '@bns/contracts';
import { api } from '../../api/api.js';

/** The API-key and webhook calls, injected into the app's one API (tags added here, so api.ts stays as it is). */
export const integrationsApi = api
  .enhanceEndpoints({ addTagTypes: ['ApiKeys', 'Webhooks', 'Deliveries'] })
  .injectEndpoints({
    endpoints: (build) => ({
      getApiKeys: build.query<ApiKey[], void>({
        query: () => 'api/keys',
        transformResponse: (r: { keys?: ApiKey[] }) => r.keys ?? [],
        providesTags: ['ApiKeys'],
      }),
      createApiKey: build.mutation<ApiKeyCreated, ApiKeyCreate>({
        query: (body) => ({ url: 'api/keys', method: 'POST', body }),
        invalidatesTags: ['ApiKeys'],
      }),
      revokeApiKey: build.mutation<{ id: string }, string>({
        query: (id) => ({ url: `api/keys/${encodeURIComponent(id)}`, method: 'DELETE' }),
        // Gone from the list at once; back if the server refused.
        async onQueryStarted(id, { dispatch, queryFulfilled }) {
          const patch = dispatch(
            integrationsApi.util.updateQueryData('getApiKeys', undefined, (keys) => keys.filter((k) => k.id !== id)),
          );
          try {
            await queryFulfilled;
          } catch {
            patch.undo();
          }
        },
        invalidatesTags: ['ApiKeys'],
      }),
      getWebhooks: build.query<Webhook[], void>({
        query: () => 'api/webhooks',
        transformResponse: (r: { webhooks?: Webhook[] }) => r.webhooks ?? [],
        providesTags: ['Webhooks'],
      }),
      createWebhook: build.mutation<WebhookWithSecret, WebhookCreate>({
        query: (body) => ({ url: 'api/webhooks', method: 'POST', body }),
        invalidatesTags: ['Webhooks'],
      }),
      updateWebhook: build.mutation<Webhook, { id: string; enabled: boolean }>({
        query: ({ id, enabled }) => ({
          url: `api/webhooks/${encodeURIComponent(id)}`,
          method: 'PATCH',
          body: { enabled },
        }),
        invalidatesTags: ['Webhooks'],
      }),
      deleteWebhook: build.mutation<{ id: string }, string>({
        query: (id) => ({ url: `api/webhooks/${encodeURIComponent(id)}`, method: 'DELETE' }),
        invalidatesTags: ['Webhooks'],
      }),
      getWebhookSecret: build.query<WebhookWithSecret, string>({
        query: (id) => `api/webhooks/${encodeURIComponent(id)}/secret`,
      }),
      rotateWebhookSecret: build.mutation<WebhookWithSecret, string>({
        query: (id) => ({ url: `api/webhooks/${encodeURIComponent(id)}/rotate`, method: 'POST' }),
        invalidatesTags: ['Webhooks'],
      }),
      testWebhook: build.mutation<{ delivery: WebhookDelivery }, string>({
        query: (id) => ({ url: `api/webhooks/${encodeURIComponent(id)}/test`, method: 'POST' }),
        invalidatesTags: ['Deliveries'],
      }),
      getDeliveries: build.query<WebhookDelivery[], string>({
        query: (id) => `api/webhooks/${encodeURIComponent(id)}/deliveries`,
        transformResponse: (r: { deliveries?: WebhookDelivery[] }) => r.deliveries ?? [],
        providesTags: ['Deliveries'],
      }),
      resendDelivery: build.mutation<{ delivery: WebhookDelivery }, { webhookId: string; deliveryId: string }>({
        query: ({ webhookId, deliveryId }) => ({
          url: `api/webhooks/${encodeURIComponent(webhookId)}/deliveries/${encodeURIComponent(deliveryId)}/resend`,
          method: 'POST',
        }),
        invalidatesTags: ['Deliveries'],
      }),
    }),
  });

export const {
  useGetApiKeysQuery,
  useCreateApiKeyMutation,
  useRevokeApiKeyMutation,
  useGetWebhooksQuery,
  useCreateWebhookMutation,
  useUpdateWebhookMutation,
  useDeleteWebhookMutation,
  useLazyGetWebhookSecretQuery,
  useRotateWebhookSecretMutation,
  useTestWebhookMutation,
  useGetDeliveriesQuery,
  useResendDeliveryMutation,
} = integrationsApi;
