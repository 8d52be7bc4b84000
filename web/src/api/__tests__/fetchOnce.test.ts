import { afterEach, describe, expect, it, vi } from 'vitest';
import { makeStore } from '../../app/store.js';
import { TEST_USER, fakeFetch } from '../../test/renderWithProviders.js';
import { api } from '../api.js';
import { fetchOnce } from '../fetchOnce.js';

afterEach(() => vi.unstubAllGlobals());

const job = (sent: number) => ({
  success: true,
  job: {
    jobId: 'job-1',
    status: 'running',
    progress: { total: 5, sent, failed: 0 },
    results: { successList: [], failedList: [] },
  },
});

/** A job-status endpoint that answers the first call at once and every later one after `slowMs`. */
function statusServer(slowMs: number) {
  let n = 0;
  return fakeFetch(async () => {
    n++;
    if (n > 1) await new Promise((r) => setTimeout(r, slowMs));
    return { body: job(n) };
  });
}

describe('fetchOnce', () => {
  it('gets the answer of a fetch that follows another of the same arguments (the cache-removal timer of the first cannot abort it)', async () => {
    vi.stubGlobal('fetch', statusServer(30).fn);
    const store = makeStore({ session: TEST_USER });
    const first = await fetchOnce(store.dispatch(api.endpoints.getJobStatus.initiate('job-1', { forceRefetch: true })));
    expect(first.progress.sent).toBe(1);
    const second = await fetchOnce(
      store.dispatch(api.endpoints.getJobStatus.initiate('job-1', { forceRefetch: true })),
    );
    expect(second.progress.sent).toBe(2);
  });

  it('shows what went wrong before: the same two fetches with subscribe: false lose the second answer', async () => {
    vi.stubGlobal('fetch', statusServer(30).fn);
    const store = makeStore({ session: TEST_USER });
    await store
      .dispatch(api.endpoints.getJobStatus.initiate('job-1', { subscribe: false, forceRefetch: true }))
      .unwrap();
    const second = await store
      .dispatch(api.endpoints.getJobStatus.initiate('job-1', { subscribe: false, forceRefetch: true }))
      .unwrap();
    // RTK Query's removal timer (keepUnusedDataFor 0) aborted the request in flight: no answer, no error.
    expect(second).toBeUndefined();
  });

  it('throws the error of a failed fetch and lets go of the subscription', async () => {
    vi.stubGlobal('fetch', fakeFetch(() => ({ status: 429, body: { success: false, error: 'Too Many Requests' } })).fn);
    const store = makeStore({ session: TEST_USER });
    const started = store.dispatch(api.endpoints.getJobStatus.initiate('job-1', { forceRefetch: true }));
    const unsubscribe = vi.spyOn(started, 'unsubscribe');
    await expect(fetchOnce(started)).rejects.toMatchObject({ status: 429 });
    expect(unsubscribe).toHaveBeenCalledTimes(1);
  });
});
