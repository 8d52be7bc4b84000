import type { WaEngineName } from '@bns/contracts';

/** A message's progress as WhatsApp acknowledges it. */
export type AckStatus = 'failed' | 'pending' | 'sent' | 'delivered' | 'read';

/** What an engine reports about one user's link. Calls may come from timers or browser events. */
export interface EngineListener {
  qr(qr: string): void;
  /** The QR was scanned; the link is being finalised. */
  authenticated(): void;
  ready(phoneNumber: string): void;
  /** The phone unlinked this device, or WhatsApp logged it out. */
  disconnected(reason: string): void;
  /** Stored login refused by WhatsApp. */
  authFailure(message: string): void;
  /** The engine could not start or died. */
  failed(error: Error): void;
  ack(messageId: string, status: AckStatus): void;
}

export interface SentMessage {
  messageId: string;
  at: Date;
}

/** One user's link as an engine runs it. */
export interface EngineSession {
  /** Launches the engine; events follow through the listener. */
  start(): Promise<void>;
  /** Throws AppError NotOnWhatsApp (permanent) or NotLinked (retryable). */
  send(to: string, text: string, idempotencyKey: string): Promise<SentMessage>;
  /** Unlinks the device and drops the stored login. */
  logout(): Promise<void>;
  /** Stops the engine and keeps the stored login (shutdown, teardown). */
  destroy(): Promise<void>;
}

/** Dev-only controls only the simulated engine has: the phone's side of the link. */
export interface SimulatorControls {
  scan(): string;
  phoneUnlink(): void;
}

export function isSimulatorControls(session: EngineSession): session is EngineSession & SimulatorControls {
  return typeof (session as Partial<SimulatorControls>).scan === 'function' && typeof (session as Partial<SimulatorControls>).phoneUnlink === 'function';
}

export interface EngineCreateOptions {
  userId: string;
  /** Set when restoring a stored link: no QR, straight to ready with this number. */
  restore?: { phoneNumber: string };
}

export interface WaEngine {
  readonly name: WaEngineName;
  create(options: EngineCreateOptions, listener: EngineListener): EngineSession;
  /** Whether a restart can bring this user's link back without a scan. */
  hasStoredAuth(userId: string): Promise<boolean>;
  deleteStoredAuth(userId: string): Promise<number>;
}

export const WA_ENGINE = Symbol('WA_ENGINE');
