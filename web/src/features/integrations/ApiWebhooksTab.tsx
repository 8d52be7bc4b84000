import { useId, useState, type FormEvent } from 'react';
import {
  API_KEY_SCOPES,
  ApiKeyCreateSchema,
  firstIssue,
  INTEGRATIONS_LIMITS,
  INTEGRATIONS_MESSAGES,
  WEBHOOK_EVENT_TYPES,
  WebhookCreateSchema,
  type ApiKeyCreated,
  type ApiKeyScope,
  type Webhook,
  type WebhookEventType,
} from '@bns/contracts';
import { errorMessage } from '../../api/errors.js';
import { Spinner } from '../../components/Spinner.js';
import { toast } from '../toasts/toasts.js';
import './integrations.css';
import {
  useCreateApiKeyMutation,
  useCreateWebhookMutation,
  useDeleteWebhookMutation,
  useGetApiKeysQuery,
  useGetDeliveriesQuery,
  useGetWebhooksQuery,
  useLazyGetWebhookSecretQuery,
  useResendDeliveryMutation,
  useRevokeApiKeyMutation,
  useRotateWebhookSecretMutation,
  useTestWebhookMutation,
  useUpdateWebhookMutation,
} from './integrationsApi.js';

const SCOPE_LABEL: Record<ApiKeyScope, string> = {
  'messages:send': 'Send messages',
  'campaigns:write': 'Start and control campaigns, opt-outs',
  read: 'Read everything',
  'templates:write': 'Change templates',
  'contacts:write': 'Change contacts and segments',
};

const when = (iso: string | null) => (iso ? new Date(iso).toLocaleString() : '—');

async function copy(text: string): Promise<void> {
  try {
    await navigator.clipboard.writeText(text);
    toast.success('Copied');
  } catch {
    toast.error('Copy failed: select the text and copy it yourself');
  }
}

/** "API & Webhooks": API keys for the business's own systems and the endpoints that receive its events. */
export function ApiWebhooksTab() {
  return (
    <div className="integrations">
      <ApiKeysCard />
      <WebhooksCard />
      <p className="muted small">
        The API reference is at <a href="/v1/docs">/v1/docs</a> (OpenAPI document:{' '}
        <a href="/v1/openapi.json">/v1/openapi.json</a>).
      </p>
    </div>
  );
}

function ApiKeysCard() {
  const keys = useGetApiKeysQuery();
  const [create, creating] = useCreateApiKeyMutation();
  const [revoke] = useRevokeApiKeyMutation();
  const [name, setName] = useState('');
  const [scopes, setScopes] = useState<ApiKeyScope[]>(['messages:send', 'read']);
  const [problem, setProblem] = useState<string>();
  const [shown, setShown] = useState<ApiKeyCreated>();
  const nameId = useId();

  const onCreate = async (e: FormEvent) => {
    e.preventDefault();
    const checked = ApiKeyCreateSchema.safeParse({ name, scopes });
    if (!checked.success) return setProblem(firstIssue(checked.error));
    setProblem(undefined);
    try {
      setShown(await create(checked.data).unwrap());
      setName('');
    } catch (err) {
      setProblem(errorMessage(err));
    }
  };

  const onRevoke = async (id: string, keyName: string) => {
    if (!window.confirm(`Revoke "${keyName}"? Systems using it stop working at once.`)) return;
    try {
      await revoke(id).unwrap();
      toast.success(`Revoked ${keyName}`);
    } catch (err) {
      toast.error(errorMessage(err));
    }
  };

  const list = keys.data ?? [];
  return (
    <section className="card" aria-labelledby="api-keys-title">
      <h2 id="api-keys-title">API keys</h2>
      <p className="muted small">
        Your own systems call the API with a key: <code>Authorization: Bearer bns_…</code>. A key acts for you only. At
        most {INTEGRATIONS_LIMITS.apiKeysPerUserMax} keys.
      </p>
      {shown && (
        <div className="key-shown" role="status" aria-label="New API key">
          <p>
            <strong>Copy your key now: it is shown only this once.</strong>
          </p>
          <code className="secret" data-testid="new-key-secret">
            {shown.secret}
          </code>
          <div className="button-row">
            <button type="button" className="button primary small" onClick={() => void copy(shown.secret)}>
              Copy
            </button>
            <button type="button" className="button secondary small" onClick={() => setShown(undefined)}>
              Done
            </button>
          </div>
        </div>
      )}
      <form onSubmit={(e) => void onCreate(e)} className="key-form">
        <label htmlFor={nameId}>Key name</label>
        <input
          id={nameId}
          value={name}
          maxLength={INTEGRATIONS_LIMITS.apiKeyNameMax}
          onChange={(e) => setName(e.target.value)}
          placeholder="Shop backend"
        />
        <fieldset>
          <legend>Scopes</legend>
          {API_KEY_SCOPES.map((s) => (
            <label key={s} className="check">
              <input
                type="checkbox"
                checked={scopes.includes(s)}
                onChange={(e) => setScopes(e.target.checked ? [...scopes, s] : scopes.filter((x) => x !== s))}
              />
              <code>{s}</code> <span className="muted small">{SCOPE_LABEL[s]}</span>
            </label>
          ))}
        </fieldset>
        {problem && (
          <p className="field-error" role="alert">
            {problem}
          </p>
        )}
        <button type="submit" className="button primary small" disabled={creating.isLoading}>
          Create key
        </button>
      </form>
      {keys.isLoading ? (
        <Spinner label="Loading API keys" />
      ) : list.length === 0 ? (
        <p className="muted">No API keys yet.</p>
      ) : (
        <ul className="result-list" aria-label="API keys">
          {list.map((k) => (
            <li key={k.id}>
              <strong>{k.name}</strong> <code>{k.prefix}…</code>{' '}
              <span className="muted small">{k.scopes.join(', ')}</span>
              <span className="muted small">
                created {when(k.createdAt)} · last used {when(k.lastUsedAt)}
              </span>
              <button
                type="button"
                className="button link small"
                aria-label={`Revoke ${k.name}`}
                onClick={() => void onRevoke(k.id, k.name)}
              >
                Revoke
              </button>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}

function WebhooksCard() {
  const hooks = useGetWebhooksQuery();
  const [create, creating] = useCreateWebhookMutation();
  const [url, setUrl] = useState('');
  const [events, setEvents] = useState<WebhookEventType[]>(['message.delivered', 'message.read', 'message.received']);
  const [problem, setProblem] = useState<string>();
  const [secret, setSecret] = useState<{ id: string; secret: string }>();
  const urlId = useId();

  const onAdd = async (e: FormEvent) => {
    e.preventDefault();
    const checked = WebhookCreateSchema.safeParse({ url, events });
    if (!checked.success) return setProblem(firstIssue(checked.error));
    setProblem(undefined);
    try {
      const created = await create(checked.data).unwrap();
      setSecret({ id: created.id, secret: created.secret });
      setUrl('');
    } catch (err) {
      setProblem(errorMessage(err));
    }
  };

  const list = hooks.data ?? [];
  return (
    <section className="card" aria-labelledby="webhooks-title">
      <h2 id="webhooks-title">Webhooks</h2>
      <p className="muted small">
        We POST each event you choose to your endpoint, signed per Standard Webhooks (<code>webhook-id</code>,{' '}
        <code>webhook-timestamp</code>, <code>webhook-signature</code>). Failed deliveries are retried for about a day.
      </p>
      <form onSubmit={(e) => void onAdd(e)} className="webhook-form">
        <label htmlFor={urlId}>Endpoint URL</label>
        <input
          id={urlId}
          type="url"
          value={url}
          onChange={(e) => setUrl(e.target.value)}
          placeholder="https://example.com/hooks/bns"
        />
        <fieldset className="event-grid">
          <legend>Events</legend>
          {WEBHOOK_EVENT_TYPES.map((t) => (
            <label key={t} className="check">
              <input
                type="checkbox"
                checked={events.includes(t)}
                onChange={(e) => setEvents(e.target.checked ? [...events, t] : events.filter((x) => x !== t))}
              />
              <code>{t}</code>
            </label>
          ))}
        </fieldset>
        {problem && (
          <p className="field-error" role="alert">
            {problem}
          </p>
        )}
        <button type="submit" className="button primary small" disabled={creating.isLoading}>
          Add endpoint
        </button>
      </form>
      {secret && (
        <div className="key-shown" role="status" aria-label="Signing secret">
          <p>Signing secret of the new endpoint (also shown under "Secret"):</p>
          <code className="secret">{secret.secret}</code>
          <div className="button-row">
            <button type="button" className="button secondary small" onClick={() => void copy(secret.secret)}>
              Copy
            </button>
            <button type="button" className="button secondary small" onClick={() => setSecret(undefined)}>
              Done
            </button>
          </div>
        </div>
      )}
      {hooks.isLoading ? (
        <Spinner label="Loading webhooks" />
      ) : list.length === 0 ? (
        <p className="muted">No endpoints yet.</p>
      ) : (
        list.map((w) => <WebhookItem key={w.id} hook={w} />)
      )}
    </section>
  );
}

function WebhookItem({ hook }: { hook: Webhook }) {
  const [open, setOpen] = useState(false);
  const [update] = useUpdateWebhookMutation();
  const [remove] = useDeleteWebhookMutation();
  const [test, testing] = useTestWebhookMutation();
  const [rotate] = useRotateWebhookSecretMutation();
  const [loadSecret, secret] = useLazyGetWebhookSecretQuery();
  const act = async (what: () => Promise<unknown>, done: string) => {
    try {
      await what();
      toast.success(done);
    } catch (err) {
      toast.error(errorMessage(err));
    }
  };
  return (
    <article className="webhook" aria-label={hook.url}>
      <div className="card-title-row">
        <code className="webhook-url">{hook.url}</code>
        <span className={`badge ${hook.enabled ? 'badge-ok' : 'badge-off'}`}>
          {hook.enabled ? 'enabled' : 'disabled'}
        </span>
      </div>
      {hook.disabledReason === 'failing' && (
        <p className="field-error" role="alert">
          {INTEGRATIONS_MESSAGES.webhookDisabledFailing}
        </p>
      )}
      <p className="muted small">{hook.events.join(', ')}</p>
      <div className="button-row">
        <button
          type="button"
          className="button secondary small"
          disabled={testing.isLoading}
          onClick={() => void act(() => test(hook.id).unwrap(), 'Test event queued')}
        >
          Send test event
        </button>
        <button type="button" className="button secondary small" onClick={() => void loadSecret(hook.id)}>
          Secret
        </button>
        <button
          type="button"
          className="button secondary small"
          onClick={() =>
            void act(
              () =>
                rotate(hook.id)
                  .unwrap()
                  .then(() => loadSecret(hook.id)),
              'New secret: the old one keeps working for 24 hours',
            )
          }
        >
          Rotate secret
        </button>
        <button
          type="button"
          className="button secondary small"
          onClick={() =>
            void act(
              () => update({ id: hook.id, enabled: !hook.enabled }).unwrap(),
              hook.enabled ? 'Disabled' : 'Enabled',
            )
          }
        >
          {hook.enabled ? 'Disable' : 'Enable'}
        </button>
        <button type="button" className="button secondary small" aria-expanded={open} onClick={() => setOpen(!open)}>
          Deliveries
        </button>
        <button
          type="button"
          className="button link small"
          onClick={() =>
            window.confirm(`Delete the endpoint ${hook.url}?`) &&
            void act(() => remove(hook.id).unwrap(), 'Endpoint deleted')
          }
        >
          Delete
        </button>
      </div>
      {secret.data?.id === hook.id && <code className="secret">{secret.data.secret}</code>}
      {open && <Deliveries webhookId={hook.id} />}
    </article>
  );
}

function Deliveries({ webhookId }: { webhookId: string }) {
  const deliveries = useGetDeliveriesQuery(webhookId, { pollingInterval: 5000 });
  const [resend] = useResendDeliveryMutation();
  if (deliveries.isLoading) return <Spinner label="Loading deliveries" />;
  const list = deliveries.data ?? [];
  if (list.length === 0) return <p className="muted">No deliveries yet.</p>;
  return (
    <table className="deliveries" aria-label="Deliveries">
      <thead>
        <tr>
          <th>Event</th>
          <th>Status</th>
          <th>HTTP</th>
          <th>Latency</th>
          <th>Attempts</th>
          <th>When</th>
          <th />
        </tr>
      </thead>
      <tbody>
        {list.map((d) => (
          <tr key={d.id}>
            <td>
              <code>{d.eventType}</code>
            </td>
            <td title={d.error ?? undefined}>{d.status}</td>
            <td>{d.httpStatus ?? '—'}</td>
            <td>{d.latencyMs === null ? '—' : `${d.latencyMs} ms`}</td>
            <td>{d.attempts}</td>
            <td>{when(d.lastAttemptAt ?? d.createdAt)}</td>
            <td>
              <button
                type="button"
                className="button link small"
                onClick={() => void resend({ webhookId, deliveryId: d.id })}
              >
                Resend
              </button>
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
