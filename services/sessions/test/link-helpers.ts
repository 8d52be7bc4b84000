import { api, devSignIn, type DevSession } from '@bns/testing';
import { RecordingSocket } from './socket-helpers.js';

export interface LinkedUser extends DevSession {
  tab: RecordingSocket;
  sessionId: string;
  phoneNumber: string;
}

/** Signs in, opens a tab, asks for a QR and scans it with the simulator: a linked account. */
export async function linkUser(gatewayUrl: string, email: string): Promise<LinkedUser> {
  const user = await devSignIn(gatewayUrl, email);
  const tab = await RecordingSocket.connect(gatewayUrl, user.token);
  tab.emit('createSession', { id: user.userId, clerkUserId: user.userId, isExplicitRequest: true });
  await tab.waitFor('qr');
  const scan = await api(gatewayUrl, user.token).post('/dev/simulator/scan');
  if (scan.status !== 200) throw new Error(`scan failed: ${scan.status} ${JSON.stringify(scan.body)}`);
  const ready = await tab.waitFor('ready');
  return { ...user, tab, sessionId: ready.payload.id, phoneNumber: ready.payload.phoneNumber };
}

export async function outbox(gatewayUrl: string, token: string): Promise<{ to: string; text: string; idempotencyKey: string; at: string }[]> {
  const res = await api(gatewayUrl, token).get('/dev/simulator/outbox');
  if (res.status !== 200) throw new Error(`outbox failed: ${res.status}`);
  return res.body.messages;
}
