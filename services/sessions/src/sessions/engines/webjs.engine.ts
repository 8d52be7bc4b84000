import type { EventEmitter } from 'node:events';
import { mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { Logger } from '@nestjs/common';
import { DataSource } from 'typeorm';
import wwebjs from 'whatsapp-web.js';
import { AppError } from '@bns/service-kit';
import { SESSION_MESSAGES, SessionsErrorCode } from '@bns/contracts';
import type { AckStatus, EngineCreateOptions, EngineListener, EngineSession, SentMessage, WaEngine } from './engine.types.js';
import { internationalDigits } from './phone.js';
import { SafeRemoteAuth } from './safe-remote-auth.js';
import { WebjsAuthStore, webjsClientId, webjsSessionName } from './webjs-auth.store.js';

/** The part of whatsapp-web.js's Client this engine uses; tests hand in a fake with the same shape. */
export interface WebjsClientLike extends EventEmitter {
  info?: { wid?: { user?: string } } | null;
  initialize(): Promise<void>;
  destroy(): Promise<void>;
  logout(): Promise<void>;
  getNumberId(number: string): Promise<{ _serialized: string } | null>;
  sendMessage(chatId: string, content: string): Promise<{ id: { _serialized: string }; timestamp?: number }>;
}

export interface WebjsClientArgs {
  userId: string;
  clientId: string;
  store: WebjsAuthStore;
  dataPath: string;
  backupSyncIntervalMs: number;
  chromiumPath: string;
  headless: boolean;
}
export type WebjsClientFactory = (args: WebjsClientArgs) => WebjsClientLike;

export interface WebjsEngineOptions {
  chromiumPath: string;
  dataPath: string;
  backupSyncIntervalMs: number;
  authMaxBytes: number;
  headless: boolean;
}

/** A real whatsapp-web.js Client: RemoteAuth in Postgres, the system Chromium, no browser download. */
export const realWebjsClient: WebjsClientFactory = (args) =>
  new wwebjs.Client({
    authStrategy: new SafeRemoteAuth({
      clientId: args.clientId,
      store: args.store,
      dataPath: args.dataPath,
      backupSyncIntervalMs: args.backupSyncIntervalMs,
    }),
    puppeteer: {
      executablePath: args.chromiumPath,
      headless: args.headless,
      args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--disable-background-networking'],
    },
  }) as unknown as WebjsClientLike;

/** whatsapp-web.js `message_ack` values: -1 error, 0 pending, 1 server, 2 device, 3 read, 4 played. */
export function ackStatusOf(ack: number): AckStatus {
  if (ack < 0) return 'failed';
  if (ack === 0) return 'pending';
  if (ack === 1) return 'sent';
  if (ack === 2) return 'delivered';
  return 'read';
}

export class WebjsEngine implements WaEngine {
  readonly name = 'webjs' as const;
  private readonly dataPath: string;

  constructor(
    private readonly db: DataSource,
    private readonly options: WebjsEngineOptions,
    private readonly clientFactory: WebjsClientFactory = realWebjsClient,
  ) {
    this.dataPath = resolve(options.dataPath);
    mkdirSync(this.dataPath, { recursive: true });
  }

  create(options: EngineCreateOptions, listener: EngineListener): EngineSession {
    const store = new WebjsAuthStore(this.db, options.userId, this.dataPath, this.options.authMaxBytes);
    const client = this.clientFactory({
      userId: options.userId,
      clientId: webjsClientId(options.userId),
      store,
      dataPath: this.dataPath,
      backupSyncIntervalMs: this.options.backupSyncIntervalMs,
      chromiumPath: this.options.chromiumPath,
      headless: this.options.headless,
    });
    return new WebjsSession(client, listener);
  }

  async hasStoredAuth(userId: string): Promise<boolean> {
    const rows: unknown[] = await this.db.query(`SELECT 1 FROM webjs_auth WHERE session = $1`, [webjsSessionName(userId)]);
    return rows.length > 0;
  }

  async deleteStoredAuth(userId: string): Promise<number> {
    const rows: { n: number }[] = await this.db.query(`WITH d AS (DELETE FROM webjs_auth WHERE user_id = $1 RETURNING 1) SELECT count(*)::int AS n FROM d`, [
      userId,
    ]);
    return rows[0]?.n ?? 0;
  }
}

class WebjsSession implements EngineSession {
  private readonly logger = new Logger('WebjsSession');
  private ready = false;
  private stopped = false;

  constructor(
    private readonly client: WebjsClientLike,
    private readonly listener: EngineListener,
  ) {
    client.on('qr', (qr: string) => listener.qr(qr));
    client.on('authenticated', () => listener.authenticated());
    client.on('ready', () => {
      this.ready = true;
      const phone = client.info?.wid?.user;
      if (phone) listener.ready(phone);
      else listener.failed(new Error('ready without an account number'));
    });
    client.on('disconnected', (reason: unknown) => {
      this.ready = false;
      listener.disconnected(String(reason));
    });
    client.on('auth_failure', (message: unknown) => listener.authFailure(String(message)));
    client.on('message_ack', (msg: { id?: { _serialized?: string } }, ack: number) => {
      const id = msg?.id?._serialized;
      if (id) listener.ack(id, ackStatusOf(ack));
    });
    client.on('remote_session_saved', () => this.logger.log('login backed up to Postgres'));
  }

  async start(): Promise<void> {
    // initialize() resolves late (after the page loads) and rejects when the browser cannot reach
    // WhatsApp; the outcome arrives through events, so it is not awaited here.
    this.client.initialize().catch((err: unknown) => {
      if (!this.stopped) this.listener.failed(err instanceof Error ? err : new Error(String(err)));
    });
  }

  async send(to: string, text: string): Promise<SentMessage> {
    if (!this.ready) throw AppError.conflict(SessionsErrorCode.NotLinked, SESSION_MESSAGES.notLinked);
    const numberId = await this.client.getNumberId(internationalDigits(to));
    if (!numberId) throw AppError.validation(SessionsErrorCode.NotOnWhatsApp, SESSION_MESSAGES.notOnWhatsApp, { to: SESSION_MESSAGES.notOnWhatsApp });
    const msg = await this.client.sendMessage(numberId._serialized, text);
    return { messageId: msg.id._serialized, at: msg.timestamp ? new Date(msg.timestamp * 1000) : new Date() };
  }

  async logout(): Promise<void> {
    this.stopped = true;
    if (this.ready) {
      this.ready = false;
      // Logout needs the page; when it is gone the stored login is still dropped by the caller.
      await this.client.logout().catch((err: unknown) => this.logger.warn({ err }, 'logout failed; destroying the browser'));
    }
    await this.client.destroy().catch(() => undefined);
  }

  async destroy(): Promise<void> {
    this.stopped = true;
    this.ready = false;
    await this.client.destroy().catch((err: unknown) => this.logger.warn({ err }, 'destroy failed'));
  }
}
