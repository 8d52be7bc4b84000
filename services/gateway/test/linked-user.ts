import { io, type Socket } from 'socket.io-client';
import { SOCKET } from '@bns/contracts';
import { devSignIn, simulatorScan, type DevSession } from '@bns/testing';

/**
 * A dev user whose simulated WhatsApp is linked, so they can start jobs: signed in, `createSession`
 * over a socket of their own, the simulator's scan, then the socket's `ready`.
 */
export async function linkedUser(gatewayUrl: string, email: string): Promise<DevSession> {
  const who = await devSignIn(gatewayUrl, email);
  const socket: Socket = io(gatewayUrl, {
    path: SOCKET.path,
    transports: [...SOCKET.transports],
    auth: { token: who.token },
    reconnection: false,
    forceNew: true,
  });
  try {
    const ready = new Promise((resolve) => socket.once('ready', resolve));
    socket.emit('createSession', { id: who.userId, clerkUserId: who.userId, isExplicitRequest: true });
    await simulatorScan(gatewayUrl, who.token);
    await ready;
  } finally {
    socket.close();
  }
  return who;
}
