import { createHash, randomBytes, randomInt, randomUUID } from 'node:crypto';
import { AppError } from '@bns/service-kit';
import { ErrorKind } from '@bns/contracts';
import {
  LIMITS,
  MEDIA_MESSAGES,
  MediaErrorCode,
  normalizePhone,
  SESSION_MESSAGES,
  SessionsErrorCode,
} from '@bns/contracts';
import type {
  EngineCreateOptions,
  EngineListener,
  EngineSession,
  IncomingMessage,
  OutgoingMedia,
  SentMessage,
  SimulatorControls,
  WaEngine,
} from './engine.types.js';
import type { SimOutboxRepository } from './sim-outbox.repository.js';
import type { SimAuthStore } from './sim-auth.store.js';

export interface SimulatedEngineOptions {
  qrIntervalMs: number;
  readyDelayMs: number;
  autoScanMs: number;
  failNumbers: readonly string[];
  deliveredDelayMs: number;
  readDelayMs: number;
  /** After this many sends the phone answers the next one with WhatsApp's rate-overlimit, then counts again (0 = never). */
  rateLimitAfter?: number;
  /** Numbers whose sends WhatsApp accepts and then refuses with an error ack (a 463-style refusal). */
  refuseNumbers?: readonly string[];
  /** Numbers that get messages delivered and never read them (a phone's owner who does not open the chat). */
  unreadNumbers?: readonly string[];
  /** How long after the acceptance the refusal comes (at most 1 s). */
  refuseDelayMs?: number;
  /** Share (0–1) of inbound messages and receipts that name the contact by LID only, without a number. */
  lidShare?: number;
  /** Numbers to which a message with an attachment fails as an upload WhatsApp did not take. */
  failMediaNumbers?: readonly string[];
  /** Linking by phone number: a new pairing code this often (WhatsApp: 3 minutes). */
  pairingCodeRefreshMs?: number;
  /** Where a link's login is kept (sealed), so a restart restores it; without it the link row alone does. */
  auth?: SimAuthStore;
}

/** The characters of WhatsApp's pairing codes (no 0, O, I or U, which read alike). */
const PAIRING_CODE_ALPHABET = '123456789ABCDEFGHJKLMNPQRSTVWXYZ';

export function simulatedPairingCode(): string {
  return Array.from({ length: LIMITS.pairingCodeLength }, () => PAIRING_CODE_ALPHABET[randomInt(0, 32)]).join('');
}

/** A code as a person may type it: case, spaces and the dash do not matter. */
export function samePairingCode(typed: string, code: string): boolean {
  return typed.replace(/[\s-]/g, '').toUpperCase() === code;
}

/** A simulated refusal arrives within this long of the send's acceptance. */
export const SIM_REFUSE_DELAY_MAX_MS = 1000;

/**
 * A QR payload shaped like WhatsApp Web's: `ref,noisePublicKey,identityKey,advSecret`, each a random
 * token, so the web renders a real, scannable-looking code that changes on every rotation.
 */
export function simulatedQr(): string {
  const b64 = (n: number) => randomBytes(n).toString('base64');
  return `2@${b64(48)},${b64(32)},${b64(32)},${b64(32)}`;
}

/** A restored simulated link replays the receipts of what it sent this long ago at most, and this many. */
const RECEIPT_REPLAY_WINDOW_MS = 60 * 60_000;
const RECEIPT_REPLAY_MAX = 1000;

/**
 * The LID a number has on the simulated WhatsApp: 15 digits derived from the number, so every
 * account and every run sees the same one (WhatsApp's LIDs are per person too).
 */
export function simulatedLid(phone: string): string {
  const digits = BigInt(`0x${createHash('sha256').update(`lid:${phone}`).digest('hex').slice(0, 15)}`) % 10n ** 15n;
  return `${String(digits).padStart(15, '1')}@lid`;
}

export function simulatedPhoneNumber(): string {
  return `${LIMITS.hkCountryCode}${String(randomInt(0, 100_000_000)).padStart(LIMITS.hkPhoneDigits, '0')}`;
}

/**
 * The offline stand-in for WhatsApp. It plays the phone: QR codes rotate until "scanned", the link gets
 * an 852 number, sends land in the durable `sim_outbox` table (once per idempotency key, like a phone
 * that received the message once), listed numbers are not on WhatsApp, and acks arrive later.
 */
export class SimulatedEngine implements WaEngine {
  readonly name = 'simulated' as const;
  private readonly failNumbers: Set<string>;
  private readonly refuseNumbers: Set<string>;
  private readonly unreadNumbers: Set<string>;
  private readonly failMediaNumbers: Set<string>;

  constructor(
    private readonly outbox: SimOutboxRepository,
    private readonly options: SimulatedEngineOptions,
  ) {
    const numbers = (list: readonly string[] = []) =>
      new Set(list.flatMap((n) => normalizePhone(n, 'international') ?? []));
    this.failNumbers = numbers(options.failNumbers);
    this.refuseNumbers = numbers(options.refuseNumbers);
    this.unreadNumbers = numbers(options.unreadNumbers);
    this.failMediaNumbers = numbers(options.failMediaNumbers);
  }

  create(options: EngineCreateOptions, listener: EngineListener): EngineSession & SimulatorControls {
    return new SimulatedSession(
      this.outbox,
      this.options,
      {
        fail: this.failNumbers,
        refuse: this.refuseNumbers,
        failMedia: this.failMediaNumbers,
        unread: this.unreadNumbers,
      },
      options,
      listener,
    );
  }

  async hasStoredAuth(userId: string): Promise<boolean> {
    return this.options.auth ? this.options.auth.exists(userId) : true;
  }

  async deleteStoredAuth(userId: string): Promise<number> {
    return this.options.auth ? this.options.auth.delete(userId) : 0;
  }
}

class SimulatedSession implements EngineSession, SimulatorControls {
  private phase: 'idle' | 'qr' | 'pairing' | 'authenticating' | 'ready' | 'stopped' = 'idle';
  private phoneNumber?: string;
  private qrTimer?: NodeJS.Timeout;
  /** Linking by phone number: the number and the code showing now. */
  private pairing?: { phoneNumber: string; code: string };
  private readonly timers = new Set<NodeJS.Timeout>();
  /** Sends since the last emulated rate-overlimit. */
  private sendsInRow = 0;

  constructor(
    private readonly outbox: SimOutboxRepository,
    private readonly options: SimulatedEngineOptions,
    private readonly numbers: {
      fail: ReadonlySet<string>;
      refuse: ReadonlySet<string>;
      failMedia?: ReadonlySet<string>;
      unread?: ReadonlySet<string>;
    },
    private readonly create: EngineCreateOptions,
    private readonly listener: EngineListener,
  ) {}

  async start(): Promise<void> {
    if (this.create.restore) {
      this.phoneNumber = this.create.restore.phoneNumber;
      if (this.options.auth) {
        // Like a real engine: the link comes back from its stored login, not from the link row.
        let stored: string | undefined;
        try {
          stored = await this.options.auth.phoneNumber(this.create.userId);
        } catch (err) {
          this.listener.failed(err instanceof Error ? err : new Error(String(err)));
          return;
        }
        if (!stored) {
          this.listener.authFailure('no stored login');
          return;
        }
        this.phoneNumber = stored;
      }
      this.phase = 'authenticating';
      this.later(0, () => {
        this.becomeReady();
        void this.replayReceipts();
      });
      return;
    }
    if (this.create.pairWithPhoneNumber) {
      this.startPairing(this.create.pairWithPhoneNumber);
      return;
    }
    this.showQr();
    if (this.options.autoScanMs > 0) this.later(this.options.autoScanMs, () => this.phase === 'qr' && this.scan());
  }

  private showQr(): void {
    this.phase = 'qr';
    this.listener.qr(simulatedQr());
    this.qrTimer = setInterval(() => this.listener.qr(simulatedQr()), this.options.qrIntervalMs);
  }

  async requestPairingCode(phoneNumber: string): Promise<void> {
    if (this.phase !== 'qr' && this.phase !== 'pairing')
      throw AppError.conflict(SessionsErrorCode.NoPendingLink, SESSION_MESSAGES.noPendingLink);
    this.startPairing(phoneNumber);
  }

  async cancelPairingCode(): Promise<void> {
    if (this.phase !== 'pairing') return;
    clearInterval(this.qrTimer);
    this.pairing = undefined;
    this.showQr();
  }

  /** Like WhatsApp Web: the QR stops, a code for that number shows and is replaced every few minutes. */
  private startPairing(phoneNumber: string): void {
    clearInterval(this.qrTimer);
    this.phase = 'pairing';
    const refreshMs = this.options.pairingCodeRefreshMs ?? LIMITS.pairingCodeRefreshMs;
    const issue = () => {
      this.pairing = { phoneNumber, code: simulatedPairingCode() };
      this.listener.pairingCode(this.pairing.code, new Date(Date.now() + refreshMs));
    };
    issue();
    this.qrTimer = setInterval(issue, refreshMs);
  }

  enterPairingCode(code: string): string {
    if (this.phase !== 'pairing' || !this.pairing)
      throw AppError.conflict(SessionsErrorCode.NoPendingPairingCode, SESSION_MESSAGES.noPendingPairingCode);
    if (!samePairingCode(code, this.pairing.code))
      throw AppError.conflict(SessionsErrorCode.PairingCodeWrong, SESSION_MESSAGES.pairingCodeWrong);
    // The code belongs to the number it was asked for: that is the account that links.
    return this.authenticate(this.pairing.phoneNumber);
  }

  scan(): string {
    if (this.phase !== 'qr') throw AppError.conflict(SessionsErrorCode.NoPendingLink, SESSION_MESSAGES.noPendingLink);
    return this.authenticate(simulatedPhoneNumber());
  }

  private authenticate(phoneNumber: string): string {
    clearInterval(this.qrTimer);
    this.pairing = undefined;
    this.phase = 'authenticating';
    this.phoneNumber = phoneNumber;
    this.listener.authenticated();
    this.later(this.options.readyDelayMs, () => this.linkReady());
    return this.phoneNumber;
  }

  phoneUnlink(): void {
    if (this.phase !== 'ready')
      throw AppError.conflict(SessionsErrorCode.NothingToDisconnect, SESSION_MESSAGES.nothingToDisconnect);
    this.stop();
    // whatsapp-web.js reports an unlink on the phone as LOGOUT.
    this.listener.disconnected('LOGOUT');
  }

  receive(input: Pick<IncomingMessage, 'phone' | 'lid' | 'text' | 'quotedMessageId'>): { messageId: string; at: Date } {
    if (this.phase !== 'ready') throw AppError.conflict(SessionsErrorCode.NotLinked, SESSION_MESSAGES.notLinked);
    const message = { messageId: `sim-in-${randomUUID()}`, at: new Date() };
    let { phone, lid } = input;
    // Like WhatsApp today: a share of senders come as a LID only, with no number.
    if (phone && this.lidOnly()) {
      lid = simulatedLid(phone);
      phone = undefined;
    }
    this.listener.incoming({
      ...(phone ? { phone } : {}),
      ...(lid ? { lid } : {}),
      text: input.text,
      at: message.at,
      messageId: message.messageId,
      ...(input.quotedMessageId ? { quotedMessageId: input.quotedMessageId } : {}),
    });
    return message;
  }

  private lidOnly(): boolean {
    const share = this.options.lidShare ?? 0;
    return share > 0 && Math.random() < share;
  }

  async send(to: string, text: string, idempotencyKey: string, media?: OutgoingMedia): Promise<SentMessage> {
    if (this.phase !== 'ready' || !this.phoneNumber)
      throw AppError.conflict(SessionsErrorCode.NotLinked, SESSION_MESSAGES.notLinked);
    const digits = normalizePhone(to, 'international') ?? to;
    if (this.numbers.fail.has(digits)) {
      throw AppError.validation(SessionsErrorCode.NotOnWhatsApp, SESSION_MESSAGES.notOnWhatsApp, {
        to: SESSION_MESSAGES.notOnWhatsApp,
      });
    }
    const limit = this.options.rateLimitAfter ?? 0;
    if (limit > 0 && this.sendsInRow >= limit) {
      this.sendsInRow = 0;
      throw new AppError(ErrorKind.RateLimited, SessionsErrorCode.RateLimited, SESSION_MESSAGES.rateLimited);
    }
    if (media && this.numbers.failMedia?.has(digits)) {
      throw AppError.validation(MediaErrorCode.SendFailed, MEDIA_MESSAGES.sendUploadFailed, {
        to: MEDIA_MESSAGES.sendUploadFailed,
      });
    }
    this.sendsInRow++;
    // What the phone shows of an attachment: its kind, hash, size and name (the bytes are checked, not kept).
    const seen = media
      ? { kind: media.ref.kind, sha256: media.ref.sha256, size: media.data.length, fileName: media.ref.fileName }
      : null;
    // The phone keeps one copy per key: a resend after a crash between send and ledger is not a second message.
    const row = await this.outbox.deliverOnce(this.create.userId, idempotencyKey, this.phoneNumber, to, text, seen);
    // Only when another send of the same key is committing at this very moment.
    if (!row) throw AppError.conflict(SessionsErrorCode.SendInProgress, SESSION_MESSAGES.sendInProgress);
    const messageId = row.messageId;
    // WhatsApp names the recipient's LID: with the send (the account learns the pair now), or, for the
    // LID-only share, only in the receipts (the sessions service pairs it with the send's number then).
    const lid = simulatedLid(digits);
    const ackLid = this.lidOnly() ? lid : undefined;
    if (!ackLid) this.listener.contact(lid, digits);
    if (this.numbers.refuse.has(digits)) {
      // Accepted (an id, like WhatsApp's), then refused with an error ack: never delivered.
      const delay = Math.min(this.options.refuseDelayMs ?? 200, SIM_REFUSE_DELAY_MAX_MS);
      this.later(delay, () => this.listener.ack(messageId, 'failed', SESSION_MESSAGES.sendRefusedAfterAccept, ackLid));
      return { messageId, at: new Date(row.sentAt) };
    }
    this.later(this.options.deliveredDelayMs, () => this.listener.ack(messageId, 'delivered', undefined, ackLid));
    if (!this.numbers.unread?.has(digits))
      this.later(Math.max(this.options.readDelayMs, this.options.deliveredDelayMs), () =>
        this.listener.ack(messageId, 'read', undefined, ackLid),
      );
    return { messageId, at: new Date(row.sentAt) };
  }

  async logout(): Promise<void> {
    this.stop();
  }

  async destroy(): Promise<void> {
    this.stop();
  }

  /**
   * Like a phone coming back online, a restored link receives the receipts of recent messages it missed
   * (their timers died with the process that sent them). A receipt already recorded changes nothing:
   * receipts only move forward.
   */
  private async replayReceipts(): Promise<void> {
    try {
      const since = new Date(Date.now() - RECEIPT_REPLAY_WINDOW_MS);
      for (const messageId of await this.outbox.sentSince(this.create.userId, since, RECEIPT_REPLAY_MAX)) {
        if (this.phase !== 'ready') return;
        this.listener.ack(messageId, 'delivered');
        this.listener.ack(messageId, 'read');
      }
    } catch {
      // The database is away: the receipts stay where they are, as a phone's would until it syncs.
    }
  }

  private becomeReady(): void {
    if (this.phase !== 'authenticating' || !this.phoneNumber) return;
    this.phase = 'ready';
    this.listener.ready(this.phoneNumber);
  }

  /** A new link: its login is stored (sealed) before it is announced, so a restart from then on restores it. */
  private linkReady(): void {
    const phoneNumber = this.phoneNumber;
    if (this.phase !== 'authenticating' || !phoneNumber) return;
    if (!this.options.auth) return this.becomeReady();
    this.options.auth.save(this.create.userId, phoneNumber).then(
      () => this.phase !== 'stopped' && this.becomeReady(),
      (err: unknown) =>
        this.phase !== 'stopped' && this.listener.failed(err instanceof Error ? err : new Error(String(err))),
    );
  }

  private later(ms: number, fn: () => void): void {
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      if (this.phase !== 'stopped') fn();
    }, ms);
    this.timers.add(timer);
  }

  private stop(): void {
    this.phase = 'stopped';
    clearInterval(this.qrTimer);
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
  }
}
