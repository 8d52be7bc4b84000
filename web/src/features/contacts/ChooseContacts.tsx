import { useState } from 'react';
import { errorMessage } from '../../api/errors.js';
import { useAppDispatch } from '../../app/hooks.js';
import { toast } from '../toasts/toasts.js';
import { addSegmentRecipients } from './chooseContacts.js';
import { useGetSegmentsQuery, useSegmentCountQuery } from './contactsApi.js';

function SegmentCount({ segmentId }: { segmentId: string }) {
  const { data } = useSegmentCountQuery(segmentId);
  return <span className="muted small">{data ? `${data.count.toLocaleString('en-US')} contacts` : '…'}</span>;
}

/**
 * Compose's "Choose contacts": a saved segment's contacts join the recipients, each with its name and
 * fields as {{variables}}. Review then counts the opted-out and not-on-WhatsApp numbers apart and says
 * which variables are empty, as for a file.
 */
export function ChooseContacts() {
  const dispatch = useAppDispatch();
  const [open, setOpen] = useState(false);
  const [segmentId, setSegmentId] = useState('');
  const [busy, setBusy] = useState(false);
  const { data: segments = [], isLoading } = useGetSegmentsQuery(undefined, { skip: !open });
  const add = async () => {
    setBusy(true);
    try {
      const added = await dispatch(addSegmentRecipients(segmentId));
      const name = segments.find((s) => s.id === segmentId)?.name ?? 'the segment';
      toast.success(`${added.toLocaleString('en-US')} contacts of ${name} added`);
      setOpen(false);
      setSegmentId('');
    } catch (err) {
      toast.error(errorMessage(err));
    } finally {
      setBusy(false);
    }
  };
  if (!open)
    return (
      <button type="button" className="button secondary small" onClick={() => setOpen(true)}>
        Choose contacts
      </button>
    );
  return (
    <div className="choose-contacts" role="group" aria-label="Choose contacts">
      {isLoading && <span className="muted small">Loading segments…</span>}
      {!isLoading && segments.length === 0 && (
        <span className="muted small">No saved segments yet: build one in the Contacts tab.</span>
      )}
      {segments.length > 0 && (
        <select aria-label="Segment" value={segmentId} onChange={(e) => setSegmentId(e.target.value)}>
          <option value="">Choose a segment…</option>
          {segments.map((s) => (
            <option key={s.id} value={s.id}>
              {s.name}
            </option>
          ))}
        </select>
      )}
      {segmentId && <SegmentCount segmentId={segmentId} />}
      <button
        type="button"
        className="button primary small"
        disabled={busy || segmentId === ''}
        onClick={() => void add()}
      >
        {busy ? 'Adding…' : 'Add to recipients'}
      </button>
      <button type="button" className="button secondary small" onClick={() => setOpen(false)}>
        Cancel
      </button>
    </div>
  );
}
