import { io, type Socket } from 'socket.io-client';
import { SOCKET, waitForValue } from './wait.js';

export interface Received {
  name: string;
  payload: any;
  at: number;
}

/** A socket.io client as the web app opens it, recording every event it receives. */
export class RecordingSocket {
  readonly received: Received[] = [];

  private constructor(readonly socket: Socket) {
    socket.onAny((name: string, payload: unknown) => this.received.push({ name, payload, at: Date.now() }));
  }

  static async connect(gatewayUrl: string, token: string): Promise<RecordingSocket> {
    const socket = io(gatewayUrl, {
      path: SOCKET.path,
      transports: [...SOCKET.transports],
      auth: { token },
      reconnection: false,
      forceNew: true,
    });
    await new Promise<void>((resolve, reject) => {
      socket.once('connect', () => resolve());
      socket.once('connect_error', (err) => reject(err));
    });
    return new RecordingSocket(socket);
  }

  emit(name: string, payload?: unknown): void {
    this.socket.emit(name, payload);
  }

  /** Emits and resolves with the server's acknowledgement. */
  ask<T = any>(name: string, payload?: unknown): Promise<T> {
    return this.socket.timeout(15_000).emitWithAck(name, payload) as Promise<T>;
  }

  named(name: string): Received[] {
    return this.received.filter((r) => r.name === name);
  }

  /** The n-th (1-based) event of this name, waiting for it. */
  waitFor(name: string, n = 1, timeoutMs = 15_000): Promise<Received> {
    return waitForValue(
      () => this.named(name)[n - 1],
      timeoutMs,
      `socket event "${name}" #${n} (got: ${this.received.map((r) => r.name).join(', ')})`,
    );
  }

  close(): void {
    this.socket.close();
  }
}
