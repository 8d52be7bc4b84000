import { randomBytes, randomInt } from 'node:crypto';
import { DataSource } from 'typeorm';
import { AppError } from '@bns/service-kit';
import { LIMITS, SESSION_MESSAGES, SessionsErrorCode } from '@bns/contracts';
import type { EngineCreateOptions, EngineListener, EngineSession, SentMessage, SimulatorControls, WaEngine } from './engine.types.js';
import { internationalDigits } from './phone.js';

export interface SimulatedEngineOptions {
  qrIntervalMs: number;
  readyDelayMs: number;
  autoScanMs: number;
  failNumbers: readonly string[];
  deliveredDelayMs: number;
  readDelayMs: number;
}

/**
 * A QR payload shaped like WhatsApp Web's: `ref,noisePublicKey,identityKey,advSecret`, each a random
 * token, so the web renders a real, scannable-looking code that changes on every rotation.
 */
export function simulatedQr(): string {
  const b64 = (n: number) => randomBytes(n).toString('base64');
  return `2@${b64(48)},${b64(32)},${b64(32)},${b64(32)}`;
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

  constructor(
    private readonly db: DataSource,
    private readonly options: SimulatedEngineOptions,
  ) {
    this.failNumbers = new Set(options.failNumbers.map(internationalDigits));
  }

  create(options: EngineCreateOptions, listener: EngineListener): EngineSession & SimulatorControls {
    return new SimulatedSession(this.db, this.options, this.failNumbers, options, listener);
  }

  // The simulator's "login" is the link row itself: nothing else to keep or drop.
  async hasStoredAuth(): Promise<boolean> {
    return true;
  }

  async deleteStoredAuth(): Promise<number> {
    return 0;
  }
}

class SimulatedSession implements EngineSession, SimulatorControls {
  private phase: 'idle' | 'qr' | 'authenticating' | 'ready' | 'stopped' = 'idle';
  private phoneNumber?: string;
  private qrTimer?: NodeJS.Timeout;
  private readonly timers = new Set<NodeJS.Timeout>();

  constructor(
    private readonly db: DataSource,
    private readonly options: SimulatedEngineOptions,
    private readonly failNumbers: ReadonlySet<string>,
    private readonly create: EngineCreateOptions,
    private readonly listener: EngineListener,
  ) {}

  async start(): Promise<void> {
    if (this.create.restore) {
      this.phoneNumber = this.create.restore.phoneNumber;
      this.phase = 'authenticating';
      this.later(0, () => this.becomeReady());
      return;
    }
    this.phase = 'qr';
    this.listener.qr(simulatedQr());
    this.qrTimer = setInterval(() => this.listener.qr(simulatedQr()), this.options.qrIntervalMs);
    if (this.options.autoScanMs > 0) this.later(this.options.autoScanMs, () => this.phase === 'qr' && this.scan());
  }

  scan(): string {
    if (this.phase !== 'qr') throw AppError.conflict(SessionsErrorCode.NoPendingLink, SESSION_MESSAGES.noPendingLink);
    clearInterval(this.qrTimer);
    this.phase = 'authenticating';
    this.phoneNumber = simulatedPhoneNumber();
    this.listener.authenticated();
    this.later(this.options.readyDelayMs, () => this.becomeReady());
    return this.phoneNumber;
  }

  phoneUnlink(): void {
    if (this.phase !== 'ready') throw AppError.conflict(SessionsErrorCode.NothingToDisconnect, SESSION_MESSAGES.nothingToDisconnect);
    this.stop();
    this.listener.disconnected('phone_unlinked');
  }

  async send(to: string, text: string, idempotencyKey: string): Promise<SentMessage> {
    if (this.phase !== 'ready' || !this.phoneNumber) throw AppError.conflict(SessionsErrorCode.NotLinked, SESSION_MESSAGES.notLinked);
    if (this.failNumbers.has(internationalDigits(to))) {
      throw AppError.validation(SessionsErrorCode.NotOnWhatsApp, SESSION_MESSAGES.notOnWhatsApp, { to: SESSION_MESSAGES.notOnWhatsApp });
    }
    // The phone keeps one copy per key: a resend after a crash between send and ledger is not a second message.
    const rows: { message_id: string; sent_at: Date }[] = await this.db.query(
      `WITH ins AS (
         INSERT INTO sim_outbox (user_id, idempotency_key, from_number, to_number, text)
         VALUES ($1, $2, $3, $4, $5)
         ON CONFLICT (user_id, idempotency_key) DO NOTHING
         RETURNING message_id, sent_at)
       SELECT message_id, sent_at FROM ins
       UNION ALL
       SELECT message_id, sent_at FROM sim_outbox WHERE user_id = $1 AND idempotency_key = $2
       LIMIT 1`,
      [this.create.userId, idempotencyKey, this.phoneNumber, to, text],
    );
    const row = rows[0];
    // Only when another send of the same key is committing at this very moment.
    if (!row) throw AppError.conflict(SessionsErrorCode.SendInProgress, SESSION_MESSAGES.sendInProgress);
    const messageId = String(row.message_id);
    this.later(this.options.deliveredDelayMs, () => this.listener.ack(messageId, 'delivered'));
    this.later(Math.max(this.options.readDelayMs, this.options.deliveredDelayMs), () => this.listener.ack(messageId, 'read'));
    return { messageId, at: new Date(row.sent_at) };
  }

  async logout(): Promise<void> {
    this.stop();
  }

  async destroy(): Promise<void> {
    this.stop();
  }

  private becomeReady(): void {
    if (this.phase !== 'authenticating' || !this.phoneNumber) return;
    this.phase = 'ready';
    this.listener.ready(this.phoneNumber);
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
