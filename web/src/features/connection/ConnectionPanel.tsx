import { displayedPhoneDigits, LIMITS, MESSAGES, WEB_MESSAGES } from '@bns/contracts';
import { useAppDispatch, useAppSelector } from '../../app/hooks.js';
import { Spinner } from '../../components/Spinner.js';
import { connectRequested, selectConnection } from './slice.js';
import { QrCode } from './QrCode.js';
import { LinkWithPhone, PairingCodeCard } from './PairingCode.js';
import { SimulatedPhone, SimulateScan, useSimulatedEngine } from './SimulatorControls.js';

const STEPS = [
  'Open WhatsApp on your phone',
  'Tap Menu or Settings',
  'Tap Linked Devices',
  'Tap Link a Device',
  'Point your phone at this screen to scan the QR code',
];

/** Tab 1 before (and once) connected: every state of SPEC §4 "WhatsApp connection". */
export function ConnectionPanel() {
  const dispatch = useAppDispatch();
  const c = useAppSelector(selectConnection);
  const simulated = useSimulatedEngine();
  const connect = () => dispatch(connectRequested());

  switch (c.status) {
    case 'unknown':
    case 'checking':
      return (
        <div className="card connection-card">
          <Spinner label="Checking for an existing WhatsApp session…" />
        </div>
      );
    case 'connecting':
    case 'creating':
      return (
        <div className="card connection-card">
          <Spinner
            label={
              c.status === 'creating' ? (c.creatingMessage ?? WEB_MESSAGES.sessionCreating) : 'Connecting to WhatsApp…'
            }
          />
          <p className="muted small">This can take up to {LIMITS.connectTimeoutMs / 1000} seconds.</p>
        </div>
      );
    case 'no_session':
      return (
        <div className="card connection-card">
          <h2>Connect your WhatsApp</h2>
          <p className="muted">
            Link your WhatsApp account once by scanning a QR code; messages are sent from your own number.
          </p>
          <button type="button" className="button primary large" onClick={connect}>
            Connect WhatsApp
          </button>
          <LinkWithPhone />
        </div>
      );
    case 'pairing':
      return <PairingCodeCard />;
    case 'qr':
    case 'max_attempts':
      return (
        <div className="card connection-card qr-card">
          <div className="qr-column">
            <QrCode value={c.qr ?? ''} blurred={c.status === 'max_attempts'} />
            <p className="qr-attempt" aria-live="polite">
              Attempt {c.attempts} of {LIMITS.qrMaxAttempts}
            </p>
          </div>
          <div>
            <h2>Scan the QR code</h2>
            {c.status === 'max_attempts' ? (
              <div className="notice notice-warning" role="alert">
                <p>
                  <strong>{c.maxAttemptsMessage}</strong> ({c.attempts} attempts)
                </p>
                <p>{MESSAGES.qrMaxAttemptsRefresh}</p>
                <button type="button" className="button secondary" onClick={() => window.location.reload()}>
                  Refresh page
                </button>
              </div>
            ) : (
              <>
                <ol className="qr-steps">
                  {STEPS.map((s) => (
                    <li key={s}>{s}</li>
                  ))}
                </ol>
                <LinkWithPhone />
                {simulated && <SimulateScan />}
              </>
            )}
          </div>
        </div>
      );
    case 'connected':
      return (
        <>
          <div className="connected-banner" role="status">
            <span className="dot dot-green" aria-hidden="true" />
            <span>
              <strong>Connected</strong> WhatsApp{' '}
              {c.phoneNumber ? <span className="phone">{displayedPhoneDigits(c.phoneNumber)}</span> : null}
            </span>
          </div>
          {simulated && <SimulatedPhone />}
        </>
      );
  }
}
