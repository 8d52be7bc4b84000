import type { MediaRef, WaEngineName } from '@bns/contracts';

/** A message's progress as WhatsApp acknowledges it. */
export type AckStatus = 'failed' | 'pending' | 'sent' | 'delivered' | 'read';

/** What an engine reports about one user's link. Calls may come from timers or browser events. */
export interface EngineListener {
  qr(qr: string): void;
  /** Linking by phone number: a new code to enter on the phone, good until `expiresAt`. */
  pairingCode(code: string, expiresAt: Date): void;
  /** The QR was scanned; the link is being finalised. */
  authenticated(): void;
  /** Linked; the account's phone number in international digits ('' when WhatsApp did not say it). */
  ready(phoneNumber: string): void;
  /** The phone unlinked this device, or WhatsApp logged it out; `reason` is WhatsApp's (LOGOUT, CONFLICT, TOS_BLOCK, …). */
  disconnected(reason: string): void;
  /** Stored login refused by WhatsApp. */
  authFailure(message: string): void;
  /** The engine could not start or died, or a phase missed its deadline (a `PhaseTimeoutError`). */
  failed(error: Error): void;
  /**
   * WhatsApp's receipt of a sent message. `failed` comes after the send was accepted: an error ack
   * (a 463 / reach-out refusal) or no server ack in time; `reason` says which, in plain words. `lid`:
   * the recipient's LID when the receipt named the recipient by it (the number is the send's).
   */
  ack(messageId: string, status: AckStatus, reason?: string, lid?: string): void;
  /**
   * A recipient wrote to the account in a one-to-one chat (never groups, status broadcasts or our own
   * messages), named by number, by LID, or both.
   */
  incoming(message: IncomingMessage): void;
  /** WhatsApp said which number a LID is (a lookup, a send): the account remembers it. */
  contact(lid: string, phone: string): void;
}

/** An attachment to send, with its bytes (one copy per shard, shared by every recipient of the job). */
export interface OutgoingMedia {
  ref: MediaRef;
  data: Buffer;
}

/** A message a recipient wrote, as the engine got it. */
export interface IncomingMessage {
  /** The sender's number in international digits, when WhatsApp gave it. */
  phone?: string;
  /** The sender's LID (`<digits>@lid`), when WhatsApp named the sender by it. */
  lid?: string;
  text: string;
  at: Date;
  messageId: string;
  /** WhatsApp's id of our message this one quotes (answers), when it does. */
  quotedMessageId?: string;
}

export interface SentMessage {
  /**
   * WhatsApp's id of the message; undefined when WhatsApp may have taken it but did not confirm it
   * (the send must then never be repeated: the ledger records it as unknown).
   */
  messageId?: string;
  at: Date;
}

/** The phases of a link that have a deadline (DESIGN: a stuck browser must not hold a shard). */
export type EnginePhase = 'start' | 'qr' | 'authenticating';

/** A link phase missed its deadline; the engine was destroyed. `qr` means nobody scanned in time. */
export class PhaseTimeoutError extends Error {
  constructor(
    readonly phase: EnginePhase,
    readonly ms: number,
  ) {
    super(`WhatsApp ${phase} phase timed out after ${ms} ms`);
    this.name = 'PhaseTimeoutError';
  }
}

/** One user's link as an engine runs it. */
export interface EngineSession {
  /**
   * Launches the engine; resolves once it shows a QR, is ready, or failed (or its start deadline
   * passed), so callers can bound how many start at once. Never rejects: failures go to the listener.
   */
  start(): Promise<void>;
  /**
   * Throws AppError NotOnWhatsApp (permanent) or NotLinked (retryable). With `media`, `text` is its
   * caption; an attachment WhatsApp will not take is a permanent MediaErrorCode.SendFailed.
   */
  send(to: string, text: string, idempotencyKey: string, media?: OutgoingMedia): Promise<SentMessage>;
  /**
   * Link by phone number instead of the QR: codes come through `listener.pairingCode`, refreshed until
   * one is entered or `cancelPairingCode` goes back to the QR. Only while a link waits (throws
   * NoPendingLink otherwise). Resolves once the request is under way, not when a code arrived.
   */
  requestPairingCode(phoneNumber: string): Promise<void>;
  cancelPairingCode(): Promise<void>;
  /** Unlinks the device and drops the stored login. */
  logout(): Promise<void>;
  /** Stops the engine and keeps the stored login (shutdown, teardown). */
  destroy(): Promise<void>;
}

/** Dev-only controls only the simulated engine has: the phone's side of the link. */
export interface SimulatorControls {
  scan(): string;
  /** The phone enters a pairing code: links when it is the code showing; answers the account's number. */
  enterPairingCode(code: string): string;
  phoneUnlink(): void;
  /** The simulated phone receives a message from a number (international digits) or from a LID alone. */
  receive(message: Pick<IncomingMessage, 'phone' | 'lid' | 'text' | 'quotedMessageId'>): {
    messageId: string;
    at: Date;
  };
}

export function isSimulatorControls(session: EngineSession): session is EngineSession & SimulatorControls {
  return (
    typeof (session as Partial<SimulatorControls>).scan === 'function' &&
    typeof (session as Partial<SimulatorControls>).phoneUnlink === 'function'
  );
}

export interface EngineCreateOptions {
  userId: string;
  /** Set when restoring a stored link: no QR, straight to ready with this number. */
  restore?: { phoneNumber: string };
  /** Link by phone number from the start (no QR shown): the number the codes are for. */
  pairWithPhoneNumber?: string;
}

export interface WaEngine {
  readonly name: WaEngineName;
  create(options: EngineCreateOptions, listener: EngineListener): EngineSession;
  /** Whether a restart can bring this user's link back without a scan. */
  hasStoredAuth(userId: string): Promise<boolean>;
  deleteStoredAuth(userId: string): Promise<number>;
}

export const WA_ENGINE = Symbol('WA_ENGINE');
