import { waitFor } from '@bns/testing';
export { SOCKET } from '@bns/contracts';

export function waitForValue<T>(fn: () => T | undefined, timeoutMs: number, what: string): Promise<T> {
  return waitFor(() => fn(), timeoutMs, 25, what) as Promise<T>;
}
