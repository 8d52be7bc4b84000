import { api } from './http.js';
import { waitFor } from './process.js';

export interface SimulatorMessage {
  to: string;
  /** The recipient's LID on the simulated WhatsApp (`<digits>@lid`). */
  lid: string;
  text: string;
  idempotencyKey: string;
  at: string;
  /** The attachment the message carried (kind, hash, size, name). */
  media?: { kind: string; sha256: string; size: number; fileName: string };
}

/**
 * "Scans" the caller's pending QR with the simulated engine (WA_ENGINE=simulated), retrying until a
 * link is pending: the QR arrives asynchronously after createSession.
 */
export async function simulatorScan(gatewayUrl: string, token: string, timeoutMs = 15_000): Promise<void> {
  await waitFor(
    async () => (await api(gatewayUrl, token).post('/dev/simulator/scan')).status === 200,
    timeoutMs,
    100,
    'a QR to scan',
  );
}

/** Everything the simulated phone side received from the caller's account. */
export async function simulatorOutbox(gatewayUrl: string, token: string): Promise<SimulatorMessage[]> {
  const res = await api(gatewayUrl, token).get('/dev/simulator/outbox');
  if (res.status !== 200) throw new Error(`simulator outbox: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.messages as SimulatorMessage[];
}

/**
 * A message from `from` arrives on the caller's simulated phone (the account must be linked): the
 * sessions service records it in its outbox and publishes `events.message.received`, as for a real one.
 */
export async function simulatorInbound(
  gatewayUrl: string,
  token: string,
  from: string,
  text: string,
): Promise<{ messageId: string; at: string }> {
  const res = await api(gatewayUrl, token).post('/dev/simulator/inbound', { from, text });
  if (res.status !== 200) throw new Error(`simulator inbound: ${res.status} ${JSON.stringify(res.body)}`);
  return { messageId: res.body.messageId as string, at: res.body.at as string };
}
