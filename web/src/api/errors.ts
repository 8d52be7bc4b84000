import type { FetchBaseQueryError } from '@reduxjs/toolkit/query';
import type { SerializedError } from '@reduxjs/toolkit';

/** The gateway's error body: {success:false, error, code, errors?}. */
export interface ApiErrorBody {
  success?: false;
  error?: string;
  code?: string;
  errors?: Record<string, string>;
}

export type ApiError = FetchBaseQueryError | SerializedError | undefined;

function isFetchError(e: unknown): e is FetchBaseQueryError {
  return typeof e === 'object' && e !== null && 'status' in e;
}

/** The HTTP status of a failed call, or undefined when the request never got an answer. */
export function httpStatus(e: unknown): number | undefined {
  return isFetchError(e) && typeof e.status === 'number' ? e.status : undefined;
}

/** True when the server was not reached (offline, DNS, refused): SPEC §4 "a failed fetch". */
export function isNetworkError(e: unknown): boolean {
  return isFetchError(e) && (e.status === 'FETCH_ERROR' || e.status === 'TIMEOUT_ERROR');
}

export function isRateLimited(e: unknown): boolean {
  return httpStatus(e) === 429;
}

/** The server's own words when it answered, else a plain description. */
export function errorMessage(e: unknown): string {
  if (isFetchError(e)) {
    const body = e.data as ApiErrorBody | undefined;
    if (body && typeof body.error === 'string') return body.error;
    if (e.status === 'FETCH_ERROR') return 'Network error: the server could not be reached';
    if (e.status === 'TIMEOUT_ERROR') return 'The request timed out';
    if ('error' in e && typeof e.error === 'string') return e.error;
    return `Request failed (${String(e.status)})`;
  }
  if (e instanceof Error) return e.message;
  if (typeof e === 'object' && e !== null && 'message' in e && typeof e.message === 'string') return e.message;
  return 'Unknown error';
}

/** The error code the server answered (`TEMPLATE_LIMIT_REACHED`, …), or undefined. */
export function errorCode(e: unknown): string | undefined {
  if (!isFetchError(e)) return undefined;
  const code = (e.data as ApiErrorBody | undefined)?.code;
  return typeof code === 'string' ? code : undefined;
}

export function fieldErrors(e: unknown): Record<string, string> {
  if (!isFetchError(e)) return {};
  const body = e.data as ApiErrorBody | undefined;
  return body?.errors ?? {};
}
