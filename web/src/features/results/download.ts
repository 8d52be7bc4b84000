import type { ExportFormat } from '@bns/contracts';
import { saveBlob } from '../../api/saveBlob.js';
import { getToken } from '../../api/token.js';

/** The user's time zone (the export's times are in it); UTC where the browser does not say. */
export function userTimeZone(): string {
  try {
    return Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';
  } catch {
    return 'UTC';
  }
}

/**
 * Downloads the report through the authenticated export call (a plain link could not carry the
 * bearer token) and saves it under the name the server gave.
 */
export async function downloadReport(jobId: string, format: ExportFormat): Promise<void> {
  const token = await getToken();
  const res = await fetch(
    `${globalThis.location?.origin ?? ''}/job-results/${encodeURIComponent(jobId)}/export?format=${format}&tz=${encodeURIComponent(userTimeZone())}`,
    {
      headers: token ? { Authorization: `Bearer ${token}` } : {},
    },
  );
  if (!res.ok) throw new Error(`export answered ${res.status}`);
  const name = /filename="([^"]+)"/.exec(res.headers.get('Content-Disposition') ?? '')?.[1] ?? `job-${jobId}.${format}`;
  saveBlob(await res.blob(), name);
}
