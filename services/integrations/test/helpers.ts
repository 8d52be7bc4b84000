import { io, type Socket } from 'socket.io-client';
import { SOCKET } from '@bns/contracts';
import { api, devSignIn, simulatorScan, type DevSession } from '@bns/testing';

export type Client = ReturnType<typeof api> & { userId: string; token: string; email: string };

let seq = 0;

export async function signIn(gatewayUrl: string, name: string): Promise<Client> {
  const session = await devSignIn(gatewayUrl, `${name}.${++seq}.${process.pid}@integrations.test`, name);
  return { ...api(gatewayUrl, session.token), userId: session.userId, token: session.token, email: session.email };
}

/** A signed-in user whose simulated WhatsApp is linked (createSession over a socket, the simulator's scan, `ready`). */
export async function linkedUser(gatewayUrl: string, name: string): Promise<Client> {
  const who: DevSession & { token: string } = await devSignIn(
    gatewayUrl,
    `${name}.${++seq}.${process.pid}@integrations.test`,
    name,
  );
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
  return { ...api(gatewayUrl, who.token), userId: who.userId, token: who.token, email: who.email };
}

/** An API key of `owner` with `scopes`: its secret and id. */
export async function createKey(
  owner: Client,
  scopes: string[],
  name = 'test key',
): Promise<{ id: string; secret: string }> {
  const res = await owner.post('/api/keys', { name, scopes });
  if (res.status !== 201) throw new Error(`key create: ${res.status} ${JSON.stringify(res.body)}`);
  return { id: res.body.id as string, secret: res.body.secret as string };
}

export const ALL_SCOPES = ['messages:send', 'campaigns:write', 'read', 'templates:write', 'contacts:write'];
