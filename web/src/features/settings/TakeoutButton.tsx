import { useState } from 'react';
import { ACCOUNT_MESSAGES } from '@bns/contracts';
import { saveBlob } from '../../api/saveBlob.js';
import { getToken } from '../../api/token.js';

/** "Download my data": the zip the gateway streams, saved under the name it gives. */
export function TakeoutButton() {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const download = async () => {
    setBusy(true);
    setError(null);
    try {
      const token = await getToken();
      const res = await fetch(`${globalThis.location.origin}/api/account/export`, {
        headers: token ? { Authorization: `Bearer ${token}` } : {},
      });
      if (!res.ok) {
        // A 409 is plain text; any other refusal is the API's JSON {error}.
        const text = await res.text();
        let message = text;
        try {
          message = (JSON.parse(text) as { error?: string }).error ?? text;
        } catch {
          // plain text already
        }
        setError(message || `Download failed (${res.status})`);
        return;
      }
      const name = /filename="([^"]+)"/.exec(res.headers.get('Content-Disposition') ?? '')?.[1] ?? 'my-data.zip';
      saveBlob(await res.blob(), name);
    } catch (e) {
      setError((e as Error).message);
    } finally {
      setBusy(false);
    }
  };
  return (
    <div>
      <button type="button" className="button secondary" disabled={busy} onClick={() => void download()}>
        {busy ? ACCOUNT_MESSAGES.takeoutPreparing : ACCOUNT_MESSAGES.takeoutButton}
      </button>
      {error && (
        <p className="field-error" role="alert">
          {error}
        </p>
      )}
    </div>
  );
}
