import { afterEach, describe, expect, it, vi } from 'vitest';
import { IDEMPOTENCY_KEY_HEADER } from '@bns/contracts';
import { makeStore } from '../../../app/store.js';
import { connectedState, TEST_USER } from '../../../test/renderWithProviders.js';
import { startSending } from '../../job/thunks.js';

afterEach(() => vi.unstubAllGlobals());

describe('Start Sending and the Idempotency-Key', () => {
  it('sends one key per confirmed send, and retries a start that got no answer with the same key', async () => {
    const keys: (string | null)[] = [];
    vi.stubGlobal('fetch', async (input: RequestInfo | URL, init?: RequestInit) => {
      const req = input instanceof Request ? input : new Request(input, init);
      keys.push(req.headers.get(IDEMPOTENCY_KEY_HEADER));
      // The first try times out at the gateway (503) although the job was made; the retry returns it.
      const status = keys.length === 1 ? 503 : 200;
      const body =
        status === 503 ? { success: false, error: 'unavailable' } : { success: true, jobId: 'job-1', estimatedTime: 1 };
      return new Response(JSON.stringify(body), { status, headers: { 'Content-Type': 'application/json' } });
    });
    const store = makeStore({
      session: TEST_USER,
      preloadedState: {
        ...connectedState(),
        sender: {
          message: 'Hello',
          phoneNumbers: ['91234567'],
          variables: {},
          rows: {},
          templateId: null,
          attachment: null,
        },
      },
    });
    await store.dispatch(startSending());
    expect(store.getState().job.jobId).toBe('job-1');
    expect(keys).toHaveLength(2);
    expect(keys[0]).toMatch(/^[0-9a-f-]{32,36}$/);
    expect(keys[1]).toBe(keys[0]);
  });
});
