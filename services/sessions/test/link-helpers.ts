import { devSignIn, simulatorOutbox, simulatorScan, type DevSession, type SimulatorMessage } from '@bns/testing';
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
  await simulatorScan(gatewayUrl, user.token);
  const ready = await tab.waitFor('ready');
  return { ...user, tab, sessionId: ready.payload.id, phoneNumber: ready.payload.phoneNumber };
}

export function outbox(gatewayUrl: string, token: string): Promise<SimulatorMessage[]> {
  return simulatorOutbox(gatewayUrl, token);
}
