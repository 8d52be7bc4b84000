import { useEffect, useState, type FormEvent } from 'react';
import { normalizeHkPhone, WEB_MESSAGES } from '@bns/contracts';
import { useSimulatorInboundMutation, useSimulatorScanMutation, useSimulatorUnlinkMutation } from '../../api/api.js';
import { errorMessage, httpStatus } from '../../api/errors.js';
import { useWebConfig } from '../config/publicConfig.js';
import { toast } from '../toasts/toasts.js';

/** True only when the gateway says WhatsApp is the simulated engine: a real engine never shows these. */
export function useSimulatedEngine(): boolean {
  return useWebConfig().whatsappEngine === 'simulated';
}

/** The phone's side of a link, for a local run without a phone: scans the QR code showing. */
export function SimulateScan() {
  const [scan, state] = useSimulatorScanMutation();
  return (
    <div className="sim-controls" role="group" aria-label="Simulated phone">
      <span className="badge badge-sim">dev only</span>
      <span className="muted small">{WEB_MESSAGES.simulatorNote}</span>
      <button
        type="button"
        className="button secondary small"
        disabled={state.isLoading}
        onClick={() => {
          scan()
            .unwrap()
            .catch((e: unknown) => toast.error(`${WEB_MESSAGES.simulatorFailed}: ${errorMessage(e)}`));
        }}
      >
        {WEB_MESSAGES.simulateScan}
      </button>
    </div>
  );
}

let inboundRoute: Promise<boolean> | null = null;

/** The reply control needs POST /dev/simulator/inbound, which not every gateway has: the API description says. */
function inboundRouteListed(): Promise<boolean> {
  inboundRoute ??= fetch(`${globalThis.location?.origin ?? ''}/api/docs-json`)
    .then(async (res) =>
      res.ok
        ? Boolean(((await res.json()) as { paths?: Record<string, unknown> }).paths?.['/dev/simulator/inbound'])
        : false,
    )
    .catch(() => false);
  return inboundRoute;
}

/** For tests. */
export function resetSimulatorProbe(): void {
  inboundRoute = null;
}

/** Once linked: the phone unlinks this device, or a contact replies. */
export function SimulatedPhone() {
  const [unlink, unlinkState] = useSimulatorUnlinkMutation();
  const [inbound, inboundState] = useSimulatorInboundMutation();
  const [canReply, setCanReply] = useState(false);
  const [from, setFrom] = useState('');
  const [text, setText] = useState('');

  useEffect(() => {
    let live = true;
    void inboundRouteListed().then((ok) => live && setCanReply(ok));
    return () => {
      live = false;
    };
  }, []);

  const reply = (e: FormEvent) => {
    e.preventDefault();
    inbound({ from: normalizeHkPhone(from) ?? from.trim(), text })
      .unwrap()
      .then(
        () => {
          toast.success(WEB_MESSAGES.simulateReplySent);
          setText('');
        },
        (err: unknown) => {
          // A gateway without the route: the control goes away instead of failing again.
          if (httpStatus(err) === 404) setCanReply(false);
          else toast.error(`${WEB_MESSAGES.simulatorFailed}: ${errorMessage(err)}`);
        },
      );
  };

  return (
    <div className="sim-controls" role="group" aria-label="Simulated phone">
      <span className="badge badge-sim">dev only</span>
      <button
        type="button"
        className="button secondary small"
        disabled={unlinkState.isLoading}
        onClick={() => {
          unlink()
            .unwrap()
            .catch((e: unknown) => toast.error(`${WEB_MESSAGES.simulatorFailed}: ${errorMessage(e)}`));
        }}
      >
        {WEB_MESSAGES.simulateUnlink}
      </button>
      {canReply && (
        <form className="sim-reply" onSubmit={reply} aria-label={WEB_MESSAGES.simulateReply}>
          <input
            aria-label={WEB_MESSAGES.simulateReplyFrom}
            placeholder={WEB_MESSAGES.simulateReplyFrom}
            inputMode="numeric"
            value={from}
            onChange={(e) => setFrom(e.target.value)}
            size={10}
          />
          <input
            aria-label={WEB_MESSAGES.simulateReplyText}
            placeholder={WEB_MESSAGES.simulateReplyText}
            value={text}
            onChange={(e) => setText(e.target.value)}
          />
          <button
            type="submit"
            className="button secondary small"
            disabled={inboundState.isLoading || normalizeHkPhone(from) === undefined || text.trim() === ''}
          >
            {WEB_MESSAGES.simulateReply}
          </button>
        </form>
      )}
    </div>
  );
}
