import { useState } from 'react';
import { EXPORT_FORMATS, RESULTS_MESSAGES, type ExportFormat } from '@bns/contracts';
import { toast } from '../toasts/toasts.js';
import { downloadReport } from './download.js';

/** Export CSV / Export XLSX: the whole report, however large (the server streams it). */
export function ExportButtons({ jobId }: { jobId: string }) {
  const [busy, setBusy] = useState<ExportFormat | null>(null);
  return (
    <>
      {EXPORT_FORMATS.map((format) => (
        <button
          key={format}
          type="button"
          className="button secondary small"
          disabled={busy !== null}
          onClick={() => {
            setBusy(format);
            downloadReport(jobId, format)
              .catch(() => toast.error(RESULTS_MESSAGES.exportDownloadFailed))
              .finally(() => setBusy(null));
          }}
        >
          {busy === format ? 'Exporting…' : `Export ${format.toUpperCase()}`}
        </button>
      ))}
    </>
  );
}
