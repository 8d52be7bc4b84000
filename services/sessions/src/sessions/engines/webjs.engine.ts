import type { EventEmitter } from 'node:events';
import { mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { Logger } from '@nestjs/common';
import wwebjs from 'whatsapp-web.js';
import { AppError, type SecretKeyRing } from '@bns/service-kit';
import {
  ErrorKind,
  LIMITS,
  MEDIA_MESSAGES,
  MediaErrorCode,
  normalizePhone,
  SESSION_MESSAGES,
  SessionsErrorCode,
} from '@bns/contracts';
import {
  PhaseTimeoutError,
  type AckStatus,
  type EngineCreateOptions,
  type EngineListener,
  type EnginePhase,
  type EngineSession,
  type OutgoingMedia,
  type SentMessage,
  type WaEngine,
} from './engine.types.js';
import { safeError } from '../../redact.js';
import { TIMED_OUT, within } from '../../timeout.js';
import { SafeRemoteAuth } from './safe-remote-auth.js';
import type { WebjsAuthRepository } from './webjs-auth.repository.js';
import { WebjsAuthStore, webjsClientId, webjsSessionName } from './webjs-auth.store.js';

/**
 * A WhatsApp id as whatsapp-web.js hands it over. Since WhatsApp Web 2.3000.1042401057 the serialized
 * form is the minified `$1` instead of `_serialized` (whatsapp-web.js #201857).
 */
export interface WebjsWid {
  _serialized?: string;
  $1?: string;
  user?: string;
  server?: string;
}
export interface WebjsMessageLike {
  id?: WebjsWid | null;
  ack?: number;
  timestamp?: number;
  /** The chat it went to: `<digits>@c.us`, or `<digits>@lid` for a contact WhatsApp names by LID. */
  to?: string;
}
/** A whatsapp-web.js `message` event's Message, the fields read here. */
export interface WebjsInboundLike {
  id?: WebjsWid | null;
  from?: string;
  fromMe?: boolean;
  body?: string;
  timestamp?: number;
  isStatus?: boolean;
  broadcast?: boolean;
  /** Whether it quotes (answers) another message; `getQuotedMessage` then finds that one. */
  hasQuotedMsg?: boolean;
  getQuotedMessage?(): Promise<WebjsMessageLike | null | undefined>;
}
export interface WebjsSendOptions {
  waitUntilMsgSent?: boolean;
  sendSeen?: boolean;
  /** With a MessageMedia: the text under it. */
  caption?: string;
  /** Sends the file as a document (with its name) instead of a picture, video or sound. */
  sendMediaAsDocument?: boolean;
}
/** whatsapp-web.js's MessageMedia, as the engine builds it (the library's own class, so sendMessage knows it). */
export interface WebjsMediaLike {
  mimetype: string;
  data: string;
  filename?: string | null;
  filesize?: number | null;
}

/** The part of whatsapp-web.js's Client this engine uses; tests hand in a fake with the same shape. */
export interface WebjsClientLike extends EventEmitter {
  info?: { wid?: WebjsWid | null } | null;
  initialize(): Promise<void>;
  destroy(): Promise<void>;
  logout(): Promise<void>;
  getNumberId(number: string): Promise<WebjsWid | null>;
  /** Resolves `undefined` when the message went out but the library could not find it again (whatsapp-web.js #201857). */
  sendMessage(
    chatId: string,
    content: string | WebjsMediaLike,
    options?: WebjsSendOptions,
  ): Promise<WebjsMessageLike | null | undefined>;
  /**
   * Switches the page from the QR to an 8-character code for `phoneNumber`, renewed every `intervalMs`
   * while unpaired; every code (the first too) is also emitted as the `code` event.
   */
  requestPairingCode(phoneNumber: string, showNotification?: boolean, intervalMs?: number): Promise<string>;
  /** Stops the codes and goes back to the QR. */
  cancelPairingCode(): Promise<void>;
  /** The phone number behind a LID (`…@lid`): `pn` is `<digits>@c.us` when WhatsApp knows it. */
  getContactLidAndPhone(userIds: string[]): Promise<{ lid?: string; pn?: string }[]>;
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
  /** Launch until the first QR (or ready, for a restore). */
  startTimeoutMs: number;
  /** QR shown until it is scanned. */
  linkTimeoutMs: number;
  /** Scanned (or restoring) until ready. */
  authTimeoutMs: number;
  /** The "is this number on WhatsApp" lookup before a send; nothing is queued yet, so a timeout may be retried. */
  lookupTimeoutMs: number;
  /**
   * A send WhatsApp's server has not acknowledged (ack ≥ 1) this long after it left is failed: the
   * tool must never count as sent what WhatsApp did not take.
   */
  serverAckTimeoutMs?: number;
  /** Linking by phone number: WhatsApp Web renews the code this often (its default, 3 minutes). */
  pairingCodeRefreshMs?: number;
}

/** What puppeteer says when the page navigated away under an `evaluate`. */
const PAGE_RELOADED = /context was destroyed|navigat|detached|target closed/i;

/** The default of `serverAckTimeoutMs`. */
const SERVER_ACK_TIMEOUT_MS = 120_000;

/** A real whatsapp-web.js Client: RemoteAuth in Postgres, the system Chromium, no browser download. */
export const realWebjsClient: WebjsClientFactory = (args) =>
  new wwebjs.Client({
    authStrategy: new SafeRemoteAuth({
      clientId: args.clientId,
      store: args.store,
      dataPath: args.dataPath,
      backupSyncIntervalMs: args.backupSyncIntervalMs,
    }).asStrategy(),
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

/** The serialized form of a WhatsApp id, old (`_serialized`) or new (`$1`) builds alike. */
export function serializedId(id: WebjsWid | null | undefined): string | undefined {
  const value = id?._serialized ?? id?.$1;
  return typeof value === 'string' && value !== '' ? value : undefined;
}

export class WebjsEngine implements WaEngine {
  readonly name = 'webjs' as const;
  private readonly dataPath: string;

  constructor(
    private readonly auth: WebjsAuthRepository,
    private readonly ring: SecretKeyRing,
    private readonly options: WebjsEngineOptions,
    private readonly clientFactory: WebjsClientFactory = realWebjsClient,
  ) {
    this.dataPath = resolve(options.dataPath);
    mkdirSync(this.dataPath, { recursive: true });
  }

  create(options: EngineCreateOptions, listener: EngineListener): EngineSession {
    const store = new WebjsAuthStore(this.auth, options.userId, this.dataPath, this.options.authMaxBytes, this.ring);
    const client = this.clientFactory({
      userId: options.userId,
      clientId: webjsClientId(options.userId),
      store,
      dataPath: this.dataPath,
      backupSyncIntervalMs: this.options.backupSyncIntervalMs,
      chromiumPath: this.options.chromiumPath,
      headless: this.options.headless,
    });
    return new WebjsSession(client, listener, this.options, options.pairWithPhoneNumber);
  }

  hasStoredAuth(userId: string): Promise<boolean> {
    return this.auth.exists(webjsSessionName(userId));
  }

  deleteStoredAuth(userId: string): Promise<number> {
    return this.auth.deleteByUser(userId);
  }
}

type SessionPhase = 'idle' | EnginePhase | 'ready' | 'stopped';

/**
 * One user's whatsapp-web.js Client. Each phase of a link has a deadline (the library has none that
 * reaches Node: `goto` waits forever, a "ready timeout" is thrown inside the page); a missed one
 * destroys the browser and reports a `PhaseTimeoutError`.
 */
class WebjsSession implements EngineSession {
  private readonly logger = new Logger('WebjsSession');
  private phase: SessionPhase = 'idle';
  private deadline?: NodeJS.Timeout;
  private started?: () => void;
  private closed?: Promise<void>;
  /** Sent messages still waiting for WhatsApp's server ack, by id: the timer fails them. */
  private readonly awaitingServerAck = new Map<string, NodeJS.Timeout>();
  /** Server acks (or errors) that came while a `sendMessage` had not answered yet, by id (a handful at most). */
  private readonly earlyAcks = new Map<string, number>();
  private sendsInFlight = 0;
  /** The number being asked for while a code request runs in the page (one at a time). */
  private askingFor?: string;

  constructor(
    private readonly client: WebjsClientLike,
    private readonly listener: EngineListener,
    private readonly options: WebjsEngineOptions,
    /** Linking by phone number: the number whose codes are shown instead of the QR. */
    private pairing?: string,
  ) {
    client.on('qr', (qr: string) => {
      if (this.phase === 'stopped') return;
      if (this.phase === 'idle' || this.phase === 'start') this.enter('qr', options.linkTimeoutMs);
      // A QR while linking by number: the page is up (first start) or came back in QR mode (WhatsApp
      // Web reloaded mid-link, which drops its code timer): ask for a code again, show no QR.
      if (this.pairing) void this.askCode();
      else listener.qr(qr);
      this.startSettled();
    });
    client.on('code', (code: unknown) => this.onCode(code));
    // The first loading_screen comes right after the scan; `authenticated` only after the history sync.
    client.on('loading_screen', () => this.onAuthenticating());
    client.on('authenticated', () => this.onAuthenticating());
    client.on('ready', () => void this.onReady());
    client.on('disconnected', (reason: unknown) => {
      if (this.phase === 'stopped') return;
      this.stop();
      listener.disconnected(String(reason));
      this.startSettled();
    });
    client.on('auth_failure', (message: unknown) => {
      if (this.phase === 'stopped') return;
      this.stop();
      listener.authFailure(String(message));
      this.startSettled();
    });
    client.on('message_ack', (msg: WebjsMessageLike, ack: number) => this.onAck(msg, ack));
    client.on('message', (msg: WebjsInboundLike) => void this.onMessage(msg));
    client.on('remote_session_saved', () => this.logger.log('login backed up to Postgres'));
  }

  start(): Promise<void> {
    this.enter('start', this.options.startTimeoutMs);
    const settled = new Promise<void>((resolve) => (this.started = resolve));
    // initialize() resolves late (after the page loads, or never) and rejects when the browser cannot
    // reach WhatsApp; the outcome arrives through events.
    this.client.initialize().catch((err: unknown) => {
      if (this.phase === 'stopped') return;
      this.stop();
      void this.closeBrowser();
      this.listener.failed(err instanceof Error ? err : new Error(String(err)));
      this.startSettled();
    });
    return settled;
  }

  async requestPairingCode(phoneNumber: string): Promise<void> {
    if (this.phase !== 'start' && this.phase !== 'qr')
      throw AppError.conflict(SessionsErrorCode.NoPendingLink, SESSION_MESSAGES.noPendingLink);
    this.pairing = phoneNumber;
    // Still launching: the first `qr` (the page is ready to link) asks for it.
    if (this.phase === 'qr') void this.askCode();
  }

  async cancelPairingCode(): Promise<void> {
    if (!this.pairing) return;
    this.pairing = undefined;
    if (this.phase !== 'qr') return;
    // The page goes back to QR codes, which reach the listener again.
    await this.client
      .cancelPairingCode()
      .catch((err: unknown) => this.logger.warn({ err: safeError(err) }, 'cancelPairingCode failed'));
  }

  private get pairingCodeRefreshMs(): number {
    return this.options.pairingCodeRefreshMs ?? LIMITS.pairingCodeRefreshMs;
  }

  /**
   * Asks the page for codes for the number (whatsapp-web.js renews them itself every refresh). The
   * codes arrive as `code` events; a request that fails ends the link as an engine failure.
   */
  private async askCode(): Promise<void> {
    const phoneNumber = this.pairing;
    if (!phoneNumber || this.askingFor !== undefined) return;
    this.askingFor = phoneNumber;
    try {
      await this.client.requestPairingCode(phoneNumber, true, this.pairingCodeRefreshMs);
    } catch (err) {
      if (this.phase === 'stopped' || this.pairing !== phoneNumber) return;
      // The page reloaded under the request (WhatsApp Web restarting mid-link): its next `qr` asks again.
      if (PAGE_RELOADED.test(String((err as Error)?.message ?? err))) {
        this.logger.warn({ err: safeError(err) }, 'pairing code request cut by a page reload; asking again');
        return;
      }
      this.stop();
      void this.closeBrowser();
      this.listener.failed(err instanceof Error ? err : new Error(String(err)));
      this.startSettled();
      return;
    } finally {
      this.askingFor = undefined;
    }
    // Another number was asked for while this request ran.
    if (this.pairing && this.pairing !== phoneNumber && this.phase === 'qr') void this.askCode();
  }

  private onCode(code: unknown): void {
    if (this.phase !== 'qr' || !this.pairing || typeof code !== 'string' || code === '') return;
    // While codes keep coming the link is alive: the deadline is the next code, with the usual wait.
    this.enter('qr', this.pairingCodeRefreshMs + this.options.linkTimeoutMs);
    this.listener.pairingCode(code, new Date(Date.now() + this.pairingCodeRefreshMs));
  }

  /** The last attachment as whatsapp-web.js takes it (base64): built once per file, not per recipient. */
  private lastMedia?: { sha256: string; media: WebjsMediaLike };

  private messageMediaOf(media: OutgoingMedia): WebjsMediaLike {
    if (this.lastMedia?.sha256 !== media.ref.sha256) {
      const { ref, data } = media;
      this.lastMedia = {
        sha256: ref.sha256,
        media: new wwebjs.MessageMedia(ref.mime, data.toString('base64'), ref.fileName, data.length),
      };
    }
    return this.lastMedia.media;
  }

  async send(to: string, text: string, _key?: string, media?: OutgoingMedia): Promise<SentMessage> {
    if (this.phase !== 'ready') throw AppError.conflict(SessionsErrorCode.NotLinked, SESSION_MESSAGES.notLinked);
    const digits = normalizePhone(to, 'international');
    if (!digits)
      throw AppError.validation(SessionsErrorCode.NotOnWhatsApp, SESSION_MESSAGES.notOnWhatsApp, {
        to: SESSION_MESSAGES.notOnWhatsApp,
      });
    const numberId = await within(this.client.getNumberId(digits), this.options.lookupTimeoutMs);
    if (numberId === TIMED_OUT)
      throw new AppError(ErrorKind.Unavailable, SessionsErrorCode.SendFailed, SESSION_MESSAGES.whatsappSlow);
    if (!numberId)
      throw AppError.validation(SessionsErrorCode.NotOnWhatsApp, SESSION_MESSAGES.notOnWhatsApp, {
        to: SESSION_MESSAGES.notOnWhatsApp,
      });
    const chatId = serializedId(numberId) ?? `${digits}@c.us`;
    // From here on WhatsApp may have the message: nothing below may free the key for a second send.
    let msg: WebjsMessageLike | null | undefined;
    this.sendsInFlight++;
    try {
      // waitUntilMsgSent: answer once WhatsApp's server took it (not at ack 0, queued in the page);
      // sendSeen false: sending must not mark the recipient's chat as read.
      msg = media
        ? await this.client.sendMessage(chatId, this.messageMediaOf(media), {
            caption: text,
            // A document goes with its file name; pictures, videos and sounds show inline.
            sendMediaAsDocument: media.ref.kind === 'document',
            waitUntilMsgSent: true,
            sendSeen: false,
          })
        : await this.client.sendMessage(chatId, text, { waitUntilMsgSent: true, sendSeen: false });
    } catch (err) {
      // An attachment is uploaded before the message exists: an upload refused means nothing was sent.
      const refusal = media ? mediaRefusalOf(err) : undefined;
      if (refusal) throw AppError.validation(MediaErrorCode.SendFailed, refusal, { to: refusal });
      this.logger.warn(
        { err: safeError(err) },
        'sendMessage failed after the message was handed to WhatsApp Web; recorded as unconfirmed',
      );
      return { at: new Date() };
    } finally {
      this.sendsInFlight--;
    }
    const messageId = serializedId(msg?.id);
    const early = messageId === undefined ? undefined : this.earlyAcks.get(messageId);
    if (messageId !== undefined) this.earlyAcks.delete(messageId);
    if (this.sendsInFlight === 0) this.earlyAcks.clear();
    if (msg?.ack === -1)
      throw AppError.validation(SessionsErrorCode.SendRejected, SESSION_MESSAGES.sendRejected, {
        to: SESSION_MESSAGES.sendRejected,
      });
    // An error ack that overtook the answer was reported already (as a refusal of an accepted send).
    if (messageId && early === undefined) this.watchServerAck(messageId, msg?.ack);
    return { messageId, at: msg?.timestamp ? new Date(msg.timestamp * 1000) : new Date() };
  }

  /** A message that left without WhatsApp's server ack yet: failed if none comes in time. */
  private watchServerAck(messageId: string, ack: number | undefined): void {
    if ((ack ?? 0) >= 1) return;
    const ms = this.options.serverAckTimeoutMs ?? SERVER_ACK_TIMEOUT_MS;
    const timer = setTimeout(() => {
      this.awaitingServerAck.delete(messageId);
      if (this.phase === 'stopped') return;
      this.listener.ack(messageId, 'failed', SESSION_MESSAGES.sendNotConfirmed);
    }, ms);
    timer.unref();
    this.awaitingServerAck.set(messageId, timer);
  }

  /**
   * `message_ack`: -1 is WhatsApp refusing a message it had accepted (463, reach-out limits); 1 and up
   * end the wait for the server's ack. Acks of messages not sent by this engine (the phone's own) go
   * through too: the ledger ignores ids it did not record.
   */
  private onAck(msg: WebjsMessageLike, ack: number): void {
    const id = serializedId(msg?.id);
    if (!id || typeof ack !== 'number') return;
    const timer = this.awaitingServerAck.get(id);
    if (timer && ack !== 0) {
      clearTimeout(timer);
      this.awaitingServerAck.delete(id);
    } else if (!timer && ack !== 0 && this.sendsInFlight > 0 && this.earlyAcks.size < 1000) {
      // Perhaps a send whose answer has not reached us yet: remembered so `send` does not wait for it.
      this.earlyAcks.set(id, ack);
    }
    // A receipt of a contact WhatsApp names by LID: the LID rides along (the number is the send's).
    const lid = typeof msg.to === 'string' && msg.to.endsWith('@lid') ? msg.to : undefined;
    if (ack < 0) this.listener.ack(id, 'failed', SESSION_MESSAGES.sendRefusedAfterAccept, lid);
    else this.listener.ack(id, ackStatusOf(ack), undefined, lid);
  }

  async logout(): Promise<void> {
    const wasReady = this.phase === 'ready';
    this.stop();
    let failure: unknown;
    if (wasReady) {
      // Logout needs the page; when it is gone the stored login is still dropped by the caller, and
      // the failure is passed on so sign-out can say the phone may still list this device.
      await this.client.logout().catch((err: unknown) => {
        this.logger.warn({ err: safeError(err) }, 'logout failed; destroying the browser');
        failure = err;
      });
    }
    await this.closeBrowser();
    if (failure !== undefined) throw failure instanceof Error ? failure : new Error(String(failure));
  }

  async destroy(): Promise<void> {
    this.stop();
    await this.closeBrowser();
  }

  /** Closes the browser once, whoever asks first (a deadline, a failure, the manager). */
  private closeBrowser(): Promise<void> {
    this.closed ??= this.client
      .destroy()
      .catch((err: unknown) => this.logger.warn({ err: safeError(err) }, 'destroy failed'));
    return this.closed;
  }

  private onAuthenticating(): void {
    if (this.phase !== 'start' && this.phase !== 'qr') return;
    this.enter('authenticating', this.options.authTimeoutMs);
    this.listener.authenticated();
  }

  private async onReady(): Promise<void> {
    if (this.phase === 'stopped') return;
    // `ready` fires again when the page re-injects: the link is the same, nothing to announce.
    if (this.phase === 'ready') return;
    const phone = await this.accountPhoneNumber();
    // The phase may have moved while the number was looked up (a destroy, a second ready).
    const now = this.phase as SessionPhase;
    if (now === 'stopped' || now === 'ready') return;
    this.enter('ready');
    this.listener.ready(phone ?? '');
    this.startSettled();
  }

  /**
   * Replies to us: one-to-one chats only. `@c.us` senders are numbers; a `@lid` sender is resolved to
   * its number when WhatsApp says it (and the pair remembered), else passed on with its LID only (the
   * sessions service then finds the number from its table or the message it quotes); groups (`@g.us`),
   * status broadcasts, newsletters and our own messages are not replies.
   */
  private async onMessage(msg: WebjsInboundLike): Promise<void> {
    if (!msg || msg.fromMe || typeof msg.from !== 'string') return;
    if (msg.isStatus || msg.broadcast) return;
    const messageId = serializedId(msg.id);
    if (!messageId) return;
    let phone: string | undefined;
    let lid: string | undefined;
    if (msg.from.endsWith('@c.us')) phone = msg.from.slice(0, -'@c.us'.length);
    else if (msg.from.endsWith('@lid')) {
      lid = msg.from;
      phone = await this.phoneOfLid(lid);
      if (phone && /^\d{6,15}$/.test(phone)) this.listener.contact(lid, phone);
    } else return;
    if (phone && !/^\d{6,15}$/.test(phone)) phone = undefined;
    if (!phone && !lid) return;
    const at = typeof msg.timestamp === 'number' && msg.timestamp > 0 ? new Date(msg.timestamp * 1000) : new Date();
    const quotedMessageId = msg.hasQuotedMsg ? await this.quotedIdOf(msg) : undefined;
    this.listener.incoming({
      ...(phone ? { phone } : {}),
      ...(lid ? { lid } : {}),
      text: typeof msg.body === 'string' ? msg.body : '',
      at,
      messageId,
      ...(quotedMessageId ? { quotedMessageId } : {}),
    });
  }

  /** The id of the message a reply quotes (a page call; only for replies that quote). */
  private async quotedIdOf(msg: WebjsInboundLike): Promise<string | undefined> {
    try {
      return serializedId((await msg.getQuotedMessage?.())?.id);
    } catch (err) {
      this.logger.warn({ err: safeError(err) }, 'could not read the message a reply quotes');
      return undefined;
    }
  }

  private async phoneOfLid(lid: string): Promise<string | undefined> {
    try {
      const [found] = await this.client.getContactLidAndPhone([lid]);
      const pn = found?.pn;
      return pn?.endsWith('@c.us') ? pn.slice(0, -'@c.us'.length) : undefined;
    } catch (err) {
      this.logger.warn({ err: safeError(err) }, 'could not resolve the phone number of a LID sender');
      return undefined;
    }
  }

  /** The account's number: a `c.us` wid is one; a LID (`lid` server) is resolved to its phone number. */
  private async accountPhoneNumber(): Promise<string | undefined> {
    const wid = this.client.info?.wid;
    if (!wid) return undefined;
    if (wid.server === 'c.us' && wid.user) return wid.user;
    const lid = serializedId(wid) ?? (wid.user && wid.server ? `${wid.user}@${wid.server}` : undefined);
    return lid ? this.phoneOfLid(lid) : undefined;
  }

  private enter(phase: SessionPhase, deadlineMs?: number): void {
    clearTimeout(this.deadline);
    this.deadline = undefined;
    this.phase = phase;
    if (deadlineMs !== undefined && (phase === 'start' || phase === 'qr' || phase === 'authenticating')) {
      this.deadline = setTimeout(() => this.expire(phase, deadlineMs), deadlineMs);
    }
  }

  private expire(phase: EnginePhase, ms: number): void {
    if (this.phase !== phase) return;
    this.stop();
    void this.closeBrowser();
    this.listener.failed(new PhaseTimeoutError(phase, ms));
    this.startSettled();
  }

  private stop(): void {
    clearTimeout(this.deadline);
    this.deadline = undefined;
    this.phase = 'stopped';
    for (const timer of this.awaitingServerAck.values()) clearTimeout(timer);
    this.awaitingServerAck.clear();
    this.earlyAcks.clear();
  }

  private startSettled(): void {
    this.started?.();
    this.started = undefined;
  }
}

/** What an error of whatsapp-web.js says about an attachment it did not upload, in plain words. */
export function mediaRefusalOf(err: unknown): string | undefined {
  const text = String((err as Error)?.message ?? err).toLowerCase();
  if (/too large|file size|exceeds|413/.test(text)) return MEDIA_MESSAGES.sendTooLarge;
  if (/unsupported|not supported|invalid media|mimetype/.test(text)) return MEDIA_MESSAGES.sendUnsupported;
  if (/upload|media/.test(text)) return MEDIA_MESSAGES.sendUploadFailed;
  return undefined;
}
