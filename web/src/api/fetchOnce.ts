/** What dispatching a query's `initiate(...)` gives back (RTK Query's QueryActionCreatorResult, in part). */
export interface InitiatedQuery<T> {
  unwrap(): Promise<T>;
  unsubscribe(): void;
}

/**
 * One fetch of a query from outside a component (a listener, a thunk, a callback): the result, or the
 * error thrown. It stays subscribed while the request is in flight and lets go after. Fetched with
 * `subscribe: false` instead, an earlier fetch's cache-removal timer (keepUnusedDataFor) can fire while
 * the next fetch of the same arguments is in flight: RTK Query then aborts it and `unwrap()` resolves
 * to `undefined` — which crashed the results list and lost status polls under load.
 */
export async function fetchOnce<T>(started: InitiatedQuery<T>): Promise<T> {
  try {
    const data = await started.unwrap();
    if (data === undefined) throw new Error('The request was interrupted; it will be tried again');
    return data;
  } finally {
    started.unsubscribe();
  }
}
