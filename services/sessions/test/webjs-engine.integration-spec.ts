import { createHash, randomBytes } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { Objm, StorageType } from '@nats-io/obj';
import wwebjs from 'whatsapp-web.js';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import type { NatsConnection } from '@nats-io/transport-node';
import type { DataSource } from 'typeorm';
import {
  DISCONNECT_REASONS,
  ErrorKind,
  LIMITS,
  MEDIA_BUCKET,
  MEDIA_MESSAGES,
  SESSION_MESSAGES,
  SessionsErrorCode,
  type EventEnvelope,
} from '@bns/contracts';
import {
  AppError,
  connectNats,
  ensureEventsStream,
  EventBus,
  openDatabase,
  OutboxPublisher,
  OutboxRepository,
  RpcClient,
  SecretBox,
  SecretKeyRing,
  Transactions,
} from '@bns/service-kit';
import { startNats, startPostgres, waitFor, type Nats, type Postgres } from '@bns/testing';
import type { SessionsEnv } from '../src/config/env.js';
import { SESSIONS_ENTITIES, SESSIONS_MIGRATIONS } from '../src/database/schema.js';
import { SafeRemoteAuth } from '../src/sessions/engines/safe-remote-auth.js';
import { MediaCache } from '../src/sessions/media-cache.js';
import { WebjsAuthRepository } from '../src/sessions/engines/webjs-auth.repository.js';
import { WebjsAuthStore, webjsSessionName } from '../src/sessions/engines/webjs-auth.store.js';
import {
  WebjsEngine,
  type WebjsClientArgs,
  type WebjsClientLike,
  type WebjsEngineOptions,
  type WebjsMessageLike,
  type WebjsWid,
} from '../src/sessions/engines/webjs.engine.js';
import { LinksRepository } from '../src/sessions/links.repository.js';
import { MessageEvents } from '../src/sessions/message-events.service.js';
import { SendLedger } from '../src/sessions/send-ledger.service.js';
import { SendsRepository } from '../src/sessions/sends.repository.js';
import { LidsRepository } from '../src/sessions/lids.repository.js';
import { SessionEvents } from '../src/sessions/session-events.js';
import { SessionManager } from '../src/sessions/session-manager.service.js';
import { EngineListeners } from '../src/sessions/engine-listeners.js';
import { UserSessions } from '../src/sessions/user-sessions.js';

/**
 * How the fake plays whatsapp-web.js 1.34.7 against today's WhatsApp Web; each knob reproduces a
 * behaviour of the real library (services/sessions/README.md lists them).
 */
interface FakeBehaviour {
  /** normal: `_serialized` ids; dollar1: ids carry only `$1` (WhatsApp Web 2.3000.1042401057+);
   *  undefined: the message goes out but `sendMessage` resolves undefined (whatsapp-web.js #201857); hang: never
   *  answers (puppeteer's 180 s protocol timeout); throw: the page call fails after the hand-over;
   *  ackError: WhatsApp answers ack -1; pending: the send leaves the page at ack 0 (no server ack yet). */
  send: 'normal' | 'dollar1' | 'undefined' | 'hang' | 'throw' | 'ackError' | 'pending' | 'uploadFails';
  /** hang: `initialize()` never settles and no event fires (a page that never loads). */
  initialize: 'resolve' | 'hang';
  /** The number lookup never answers. */
  lookupHangs: boolean;
  /** What `getContactLidAndPhone` knows: LID → phone wid. */
  lidPhones: Record<string, string>;
}
const DEFAULT_BEHAVIOUR: FakeBehaviour = { send: 'normal', initialize: 'resolve', lookupHangs: false, lidPhones: {} };

/** A whatsapp-web.js Client stand-in: the test plays WhatsApp by emitting the Client's events. */
class FakeClient extends EventEmitter implements WebjsClientLike {
  info: { wid: WebjsWid } | null = null;
  readonly calls: string[] = [];
  readonly sent: { chatId: string; text: string | object }[] = [];
  readonly sendOptions: unknown[] = [];
  constructor(
    readonly args: WebjsClientArgs,
    readonly behaviour: FakeBehaviour,
  ) {
    super();
  }
  initialize() {
    this.calls.push('initialize');
    return this.behaviour.initialize === 'hang' ? new Promise<void>(() => undefined) : Promise.resolve();
  }
  async destroy() {
    this.calls.push('destroy');
    clearInterval(this.codeTimer);
  }
  failLogout = false;
  async logout() {
    this.calls.push('logout');
    if (this.failLogout) throw new Error('Execution context was destroyed');
  }
  async getNumberId(number: string): Promise<WebjsWid | null> {
    if (this.behaviour.lookupHangs) return new Promise<null>(() => undefined);
    if (number === '85299999999') return null;
    const id = `${number}@c.us`;
    return this.behaviour.send === 'dollar1'
      ? { $1: id, user: number, server: 'c.us' }
      : { _serialized: id, user: number, server: 'c.us' };
  }
  async sendMessage(chatId: string, text: string | object, options?: unknown): Promise<WebjsMessageLike | undefined> {
    this.sendOptions.push(options);
    if (this.behaviour.send === 'hang') {
      this.sent.push({ chatId, text }); // handed to the page, which never answers
      return new Promise<undefined>(() => undefined);
    }
    this.sent.push({ chatId, text });
    const key = `true_${chatId}_${this.sent.length}`;
    const timestamp = Math.floor(Date.now() / 1000);
    switch (this.behaviour.send) {
      case 'undefined':
        return undefined;
      case 'throw':
        throw new Error(`Evaluation failed: Error: Execution context was destroyed (chat ${chatId})`);
      case 'uploadFails':
        throw new Error('Evaluation failed: Error: Media upload failed');
      case 'dollar1':
        return { id: { $1: key }, ack: 1, timestamp };
      case 'ackError':
        return { id: { _serialized: key }, ack: -1, timestamp };
      case 'pending':
        return { id: { _serialized: key }, ack: 0, timestamp };
      default:
        return { id: { _serialized: key }, ack: 1, timestamp };
    }
  }
  async getContactLidAndPhone(userIds: string[]) {
    return userIds.map((lid) => ({ lid, pn: this.behaviour.lidPhones[lid] }));
  }
  /** The page's code timer (whatsapp-web.js keeps it as `window.codeInterval`). */
  private codeTimer?: NodeJS.Timeout;
  codesIssued = 0;
  /** Errors the next code requests fail with (the page call rejecting), one per request. */
  readonly codeFailures: Error[] = [];
  /**
   * As whatsapp-web.js 1.34.7 does: every code, the first included, is emitted as `code` (the page's
   * `onCodeReceivedEvent`), the first one also returned, and a new one comes every `intervalMs` while unpaired.
   */
  async requestPairingCode(phoneNumber: string, showNotification = true, intervalMs = 180_000): Promise<string> {
    this.calls.push(`requestPairingCode:${phoneNumber}:${showNotification}:${intervalMs}`);
    const failure = this.codeFailures.shift();
    if (failure) throw failure;
    clearInterval(this.codeTimer);
    const issue = () => {
      this.codesIssued += 1;
      const code = `CODE${String(this.codesIssued).padStart(4, '0')}`;
      this.emit('code', code);
      return code;
    };
    this.codeTimer = setInterval(issue, intervalMs);
    return issue();
  }
  async cancelPairingCode() {
    this.calls.push('cancelPairingCode');
    clearInterval(this.codeTimer);
    this.codeTimer = undefined;
  }
  /** WhatsApp Web reloads mid-link: the page's code timer is gone and it comes back showing a QR. */
  reloadPage(qr: string) {
    clearInterval(this.codeTimer);
    this.codeTimer = undefined;
    this.emit('qr', qr);
  }
  link(phone: string, wid: WebjsWid = { user: phone, server: 'c.us', _serialized: `${phone}@c.us` }) {
    clearInterval(this.codeTimer);
    this.emit('authenticated');
    this.info = { wid };
    this.emit('ready');
  }
  /**
   * The phone unlinks this device: whatsapp-web.js's `framenavigated` handler emits LOGOUT (its
   * unawaited re-inject that then rejects is reproduced in a real process, see test 2).
   */
  phoneLogout() {
    this.emit('disconnected', 'LOGOUT');
  }
}

const ENV = {
  SHARD_INDEX: 0,
  SESSIONS_SHARDS: 1,
  WA_ENGINE: 'webjs',
  RESTORE_CONCURRENCY: 2,
  AUTO_LOGIN_PREF_TIMEOUT_MS: 200,
  SEND_TIMEOUT_MS: 2000,
  SESSIONS_LEDGER_BATCH: 100,
  SESSIONS_LEDGER_STATEMENTS: 2,
} as unknown as SessionsEnv;

/** Every stored profile is sealed under SESSION_STATE_KEY; the tests use a key of their own. */
const RING = new SecretKeyRing(new SecretBox(randomBytes(32).toString('base64'), 'SESSION_STATE_KEY'));

const ENGINE_OPTIONS: Omit<WebjsEngineOptions, 'dataPath'> = {
  chromiumPath: '/nonexistent',
  backupSyncIntervalMs: 60_000,
  authMaxBytes: 1024 * 1024,
  headless: true,
  startTimeoutMs: 10_000,
  linkTimeoutMs: 60_000,
  authTimeoutMs: 10_000,
  lookupTimeoutMs: 500,
};

describe('webjs engine against a fake whatsapp-web.js Client (real Postgres and NATS)', () => {
  let pg: Postgres;
  let nats: Nats;
  let db: DataSource;
  let nc: NatsConnection;
  let dataPath: string;
  const events: (EventEnvelope & Record<string, any>)[] = [];
  const clients: FakeClient[] = [];
  const managers: SessionManager[] = [];
  const mediaCaches: MediaCache[] = [];
  const publishers: OutboxPublisher[] = [];

  const newManager = async (
    opts: { env?: Partial<SessionsEnv>; engine?: Partial<WebjsEngineOptions>; behaviour?: Partial<FakeBehaviour> } = {},
  ) => {
    const engine = new WebjsEngine(
      new WebjsAuthRepository(new Transactions(db)),
      RING,
      { ...ENGINE_OPTIONS, dataPath, ...opts.engine },
      (args) => {
        const c = new FakeClient(args, { ...DEFAULT_BEHAVIOUR, ...opts.behaviour });
        clients.push(c);
        return c;
      },
    );
    const env = { ...ENV, ...opts.env } as SessionsEnv;
    const tx = new Transactions(db);
    const sessionEvents = new SessionEvents(new EventBus(nc));
    const sends = new SendsRepository(tx, env);
    const outbox = new OutboxRepository(tx);
    const publisher = new OutboxPublisher(tx, outbox, new EventBus(nc));
    publishers.push(publisher);
    const links = new LinksRepository(tx);
    const ledger = new SendLedger(sends, env);
    const userSessions = new UserSessions(env);
    const listeners = new EngineListeners(
      engine,
      env,
      userSessions,
      links,
      ledger,
      sessionEvents,
      new RpcClient(nc, { shards: 1, timeoutMs: 1000 }),
      new MessageEvents(tx, sends, outbox, publisher, new LidsRepository(tx, env)),
    );
    const media = new MediaCache(nc, { MEDIA_CACHE_BYTES: 64 * 1024 * 1024 });
    mediaCaches.push(media);
    const manager = new SessionManager(engine, env, userSessions, listeners, links, ledger, sessionEvents, media);
    managers.push(manager);
    await manager.onApplicationBootstrap();
    return manager;
  };
  const eventsOf = (userId: string, subject?: string) =>
    events.filter((e) => e.userId === userId && (!subject || e.subject === subject));
  const statesOf = (userId: string) => eventsOf(userId, 'events.session.state').map((e) => e.state);
  const lastClient = () => clients[clients.length - 1]!;

  beforeAll(async () => {
    [pg, nats] = await Promise.all([startPostgres(), startNats()]);
    db = await openDatabase({
      url: pg.url,
      schema: 'sessions',
      entities: SESSIONS_ENTITIES,
      migrations: SESSIONS_MIGRATIONS,
    });
    nc = await connectNats(nats.url, 'webjs-test');
    await ensureEventsStream(nc);
    nc.subscribe('events.>', {
      callback: (_e, msg) => void events.push({ ...msg.json<EventEnvelope>(), subject: msg.subject }),
    });
    dataPath = mkdtempSync(join(tmpdir(), 'bns-wwebjs-'));
  }, 60_000);

  afterAll(async () => {
    for (const m of managers) await m.beforeApplicationShutdown();
    for (const p of publishers) await p.drain();
    await nc?.drain();
    await db?.destroy();
    await Promise.all([nats?.stop(), pg?.stop()]);
    rmSync(dataPath, { recursive: true, force: true });
  });

  it('turns 5 qr events into QR states, the 6th into qr_max_attempts, and destroys the browser', async () => {
    const manager = await newManager();
    const userId = 'user_qr';
    expect(await manager.connect(userId, true)).toEqual({ state: 'creating', sessionId: expect.any(String) });
    const client = lastClient();
    expect(client.calls).toEqual(['initialize']);
    expect(client.args.clientId).toBe(userId);
    for (let i = 1; i <= LIMITS.qrMaxAttempts + 1; i++) client.emit('qr', `qr-code-${i}`);
    await waitFor(() => statesOf(userId).includes('qr_max_attempts'), 5000);
    const qrs = eventsOf(userId, 'events.session.state').filter((e) => e.state === 'qr');
    expect(qrs.map((e) => [e.qr, e.attempts])).toEqual([1, 2, 3, 4, 5].map((n) => [`qr-code-${n}`, n]));
    expect(eventsOf(userId).find((e) => e.state === 'qr_max_attempts')).toMatchObject({
      message: SESSION_MESSAGES.qrMaxAttempts,
      attempts: 5,
    });
    expect(client.calls).toEqual(['initialize', 'destroy']);
    expect(await manager.status(userId)).toEqual({ state: 'no_session' });
  });

  it('links by phone number without createSession: codes instead of QRs, renewed, asked again after a page reload mid-link', async () => {
    const refreshMs = 400;
    const manager = await newManager({ engine: { pairingCodeRefreshMs: refreshMs } });
    const userId = 'user_pair';
    const invalid = (await manager.requestPairingCode(userId, '12-34').catch((e: AppError) => e)) as AppError;
    expect([invalid.kind, invalid.code, invalid.message]).toEqual([
      ErrorKind.Validation,
      SessionsErrorCode.PairingPhoneInvalid,
      SESSION_MESSAGES.pairingPhoneInvalid,
    ]);
    expect(clients.filter((c) => c.args.userId === userId)).toHaveLength(0);

    const asked = Date.now();
    expect(await manager.requestPairingCode(userId, '+852 9123 4567')).toEqual({ sessionId: expect.any(String) });
    const client = lastClient();
    expect(client.calls).toEqual(['initialize']);
    // The page is up (its first QR): the engine asks for a code for the number instead of showing the QR.
    client.emit('qr', 'qr-never-shown');
    await waitFor(() => statesOf(userId).includes('pairing_code'), 5000);
    expect(client.calls).toEqual(['initialize', `requestPairingCode:85291234567:true:${refreshMs}`]);
    const first = eventsOf(userId).find((e) => e.state === 'pairing_code')!;
    expect(first.code).toBe('CODE0001');
    const expiresIn = Date.parse(first.expiresAt) - asked;
    expect(expiresIn).toBeGreaterThanOrEqual(refreshMs);
    expect(expiresIn).toBeLessThan(refreshMs + 2000);
    expect(await manager.status(userId)).toEqual({ state: 'pairing_code', sessionId: expect.any(String) });

    // WhatsApp Web renews the code; then the page reloads mid-link (its code timer dies, a QR shows).
    await waitFor(() => statesOf(userId).filter((s) => s === 'pairing_code').length >= 2, 5000);
    client.reloadPage('qr-after-reload');
    await waitFor(() => client.calls.filter((c) => c.startsWith('requestPairingCode')).length === 2, 5000);
    const codes = () =>
      eventsOf(userId)
        .filter((e) => e.state === 'pairing_code')
        .map((e) => e.code);
    await waitFor(() => codes().length >= 3, 5000);
    expect(new Set(codes()).size).toBe(codes().length);
    expect(statesOf(userId)).not.toContain('qr');

    // The code is entered on the phone: the usual finalising and ready, at that number.
    client.link('85291234567');
    await waitFor(() => statesOf(userId).includes('ready'), 5000);
    expect(eventsOf(userId).find((e) => e.state === 'ready')).toMatchObject({ phoneNumber: '85291234567' });
    expect(statesOf(userId).slice(-2)).toEqual(['creating', 'ready']);
    const afterReady = codes().length;
    await new Promise((r) => setTimeout(r, refreshMs * 2));
    expect(codes()).toHaveLength(afterReady);
    const linked = (await manager.requestPairingCode(userId, '85291234567').catch((e: AppError) => e)) as AppError;
    expect(linked.code).toBe(SessionsErrorCode.PairingAlreadyLinked);
  });

  it('a code request cut by a page reload is asked again at the next QR; any other failure ends the link as engine_failed', async () => {
    const manager = await newManager();
    const userId = 'user_pair_reload';
    await manager.requestPairingCode(userId, '85291234568');
    const client = lastClient();
    client.codeFailures.push(new Error('Execution context was destroyed, most likely because of a navigation.'));
    client.emit('qr', 'qr-before-reload');
    await waitFor(() => client.calls.filter((c) => c.startsWith('requestPairingCode')).length === 1, 5000);
    expect(statesOf(userId)).toEqual([]);
    client.emit('qr', 'qr-after-reload');
    await waitFor(() => statesOf(userId).includes('pairing_code'), 5000);
    expect(client.calls.filter((c) => c.startsWith('requestPairingCode'))).toHaveLength(2);
    await manager.logout(userId);

    const other = 'user_pair_broken';
    await manager.requestPairingCode(other, '85291234569');
    const broken = lastClient();
    broken.codeFailures.push(new Error('Evaluation failed: TypeError: PairingCodeLinkUtils is undefined'));
    broken.emit('qr', 'qr');
    await waitFor(() => statesOf(other).includes('disconnected'), 5000);
    expect(eventsOf(other).find((e) => e.state === 'disconnected')).toMatchObject({
      reason: DISCONNECT_REASONS.engineFailed,
      message: SESSION_MESSAGES.engineFailed,
    });
    expect(broken.calls).toContain('destroy');
    expect(statesOf(other)).not.toContain('pairing_code');
  });

  it('turns a QR link into a code and back: cancel shows QR codes again, attempts counted afresh', async () => {
    const manager = await newManager();
    const userId = 'user_pair_cancel';
    await manager.connect(userId, true);
    const client = lastClient();
    client.emit('qr', 'qr-1');
    client.emit('qr', 'qr-2');
    await waitFor(() => statesOf(userId).filter((s) => s === 'qr').length === 2, 5000);
    await manager.requestPairingCode(userId, '91234567');
    await waitFor(() => statesOf(userId).includes('pairing_code'), 5000);
    expect(client.calls).toContain(`requestPairingCode:85291234567:true:${LIMITS.pairingCodeRefreshMs}`);
    // A QR the page still shows meanwhile is not passed on.
    client.emit('qr', 'qr-hidden');
    expect(await manager.cancelPairingCode(userId)).toEqual({ cancelled: true });
    expect(client.calls).toContain('cancelPairingCode');
    client.emit('qr', 'qr-3');
    await waitFor(() => statesOf(userId).filter((s) => s === 'qr').length === 3, 5000);
    const qrs = eventsOf(userId).filter((e) => e.state === 'qr');
    expect(qrs.map((e) => [e.qr, e.attempts])).toEqual([
      ['qr-1', 1],
      ['qr-2', 2],
      ['qr-3', 1],
    ]);
    expect(await manager.cancelPairingCode(userId)).toEqual({ cancelled: false });
    await manager.logout(userId);
  });

  it('maps authenticated/ready to creating/ready, sends, maps message_ack to statuses, and disconnected to disconnected', async () => {
    const manager = await newManager();
    const userId = 'user_link';
    await manager.connect(userId, true);
    const client = lastClient();
    client.emit('qr', 'code');
    client.link('85290000001');
    await waitFor(() => statesOf(userId).includes('ready'), 5000);
    expect(statesOf(userId)).toEqual(['qr', 'creating', 'ready']);
    expect(eventsOf(userId).find((e) => e.state === 'ready')).toMatchObject({ phoneNumber: '85290000001' });

    // The auto-login message (no dashboard answers here: the default is on) goes to the account's own number.
    await waitFor(() => client.sent.length === 1, 5000);
    expect(client.sent[0]).toEqual({ chatId: '85290000001@c.us', text: SESSION_MESSAGES.autoLoginSuccess });

    const reply = await manager.send({ userId, to: '91234567', text: 'hi', idempotencyKey: 'job-w:91234567' });
    expect(reply).toEqual({
      messageId: 'true_85291234567@c.us_2',
      status: 'sent',
      at: expect.any(String),
      duplicate: false,
    });
    expect(
      (await manager.send({ userId, to: '91234567', text: 'hi', idempotencyKey: 'job-w:91234567' })).duplicate,
    ).toBe(true);
    expect(client.sent).toHaveLength(2);

    const refused = (await manager
      .send({ userId, to: '99999999', text: 'hi', idempotencyKey: 'job-w:99999999' })
      .catch((e: AppError) => e)) as AppError;
    expect([refused.kind, refused.code, refused.message]).toEqual([
      ErrorKind.Validation,
      SessionsErrorCode.NotOnWhatsApp,
      'number is not on WhatsApp',
    ]);

    const msg = { id: { _serialized: reply.messageId } };
    client.emit('message_ack', msg, 1); // server ack = sent: the jobs service reports sent itself
    client.emit('message_ack', msg, 2);
    client.emit('message_ack', msg, 3);
    await waitFor(() => eventsOf(userId, 'events.message.status').length === 2, 5000);
    expect(
      eventsOf(userId, 'events.message.status').map((e) => [
        e.status,
        e.jobId,
        e.recipient,
        e.idempotencyKey,
        e.messageId,
        e.content,
      ]),
    ).toEqual([
      ['delivered', 'job-w', '91234567', 'job-w:91234567', reply.messageId, 'hi'],
      ['read', 'job-w', '91234567', 'job-w:91234567', reply.messageId, 'hi'],
    ]);

    client.emit('disconnected', 'LOGOUT');
    await waitFor(() => statesOf(userId).includes('disconnected'), 5000);
    expect(eventsOf(userId).find((e) => e.state === 'disconnected')).toMatchObject({ reason: 'phone_unlinked' });
    expect(client.calls).toContain('destroy');
    expect(await db.query(`SELECT 1 FROM links WHERE user_id = $1`, [userId])).toHaveLength(0);
    const notLinked = (await manager
      .send({ userId, to: '91234568', text: 'x', idempotencyKey: 'job-w:91234568' })
      .catch((e: AppError) => e)) as AppError;
    expect([notLinked.kind, notLinked.code]).toEqual([ErrorKind.Conflict, SessionsErrorCode.NotLinked]);
  });

  it('cleanup logs the client out, destroys it and deletes the stored login', async () => {
    const manager = await newManager();
    const userId = 'user_cleanup';
    await manager.connect(userId, true);
    const client = lastClient();
    client.link('85290000002');
    await waitFor(() => statesOf(userId).includes('ready'), 5000);
    await db.query(`INSERT INTO webjs_auth (session, user_id, data, size_bytes) VALUES ($1, $2, $3, 3)`, [
      webjsSessionName(userId),
      userId,
      Buffer.from('zip'),
    ]);

    expect(await manager.logout(userId)).toEqual({ sessionsCleanedUp: 1 });
    expect(client.calls).toEqual(['initialize', 'logout', 'destroy']);
    expect(await db.query(`SELECT 1 FROM webjs_auth WHERE user_id = $1`, [userId])).toHaveLength(0);
    expect(await manager.logout(userId)).toEqual({ sessionsCleanedUp: 0 });
  });

  it('cleanup reports a WhatsApp logout that failed, and still drops the browser and the stored login', async () => {
    const manager = await newManager();
    const userId = 'user_cleanup_partial';
    await manager.connect(userId, true);
    const client = lastClient();
    client.link('85290000005');
    await waitFor(() => statesOf(userId).includes('ready'), 5000);
    await db.query(`INSERT INTO webjs_auth (session, user_id, data, size_bytes) VALUES ($1, $2, $3, 3)`, [
      webjsSessionName(userId),
      userId,
      Buffer.from('zip'),
    ]);
    client.failLogout = true;

    expect(await manager.logout(userId)).toEqual({
      sessionsCleanedUp: 0,
      failures: [{ step: 'whatsapp_logout', message: SESSION_MESSAGES.cleanupWhatsappLogoutFailed }],
    });
    expect(client.calls).toEqual(['initialize', 'logout', 'destroy']);
    expect(await db.query(`SELECT 1 FROM webjs_auth WHERE user_id = $1`, [userId])).toHaveLength(0);
    expect(await db.query(`SELECT 1 FROM links WHERE user_id = $1`, [userId])).toHaveLength(0);
    await waitFor(() => statesOf(userId).includes('disconnected'), 5000);
    expect(await manager.logout(userId)).toEqual({ sessionsCleanedUp: 0 });
  });

  it('restores a stored link on start without a QR, and forgets a link whose login never reached the store', async () => {
    const restorable = 'user_restore';
    const unsaved = 'user_unsaved';
    await db.query(
      `INSERT INTO links (user_id, engine, phone_number) VALUES ($1, 'webjs', '85290000003'), ($2, 'webjs', '85290000004')`,
      [restorable, unsaved],
    );
    await db.query(`INSERT INTO webjs_auth (session, user_id, data, size_bytes) VALUES ($1, $2, $3, 3)`, [
      webjsSessionName(restorable),
      restorable,
      Buffer.from('zip'),
    ]);
    const before = clients.length;
    const manager = await newManager();
    await waitFor(() => clients.length === before + 1, 5000);
    const client = lastClient();
    expect(client.args.clientId).toBe(restorable);
    expect(await manager.status(restorable)).toMatchObject({ state: 'creating' });
    client.link('85290000003');
    await waitFor(() => statesOf(restorable).includes('exist'), 5000);
    expect(await manager.status(restorable)).toMatchObject({ state: 'exist', phoneNumber: '85290000003' });
    expect(client.sent).toHaveLength(0); // a restore is not a new link: no auto-login message
    await waitFor(async () => (await db.query(`SELECT 1 FROM links WHERE user_id = $1`, [unsaved])).length === 0, 5000);
    expect(await manager.status(unsaved)).toEqual({ state: 'no_session' });
  });

  it('keeps RemoteAuth profiles in Postgres: zip round trip, nothing before the first save, bad zips refused', async () => {
    const userId = 'user_store';
    const store = new WebjsAuthStore(
      new WebjsAuthRepository(new Transactions(db)),
      userId,
      dataPath,
      1024 * 1024,
      RING,
    );
    const auth = new SafeRemoteAuth({ clientId: userId, store, dataPath, backupSyncIntervalMs: 60_000 });
    (auth as any).setup({ options: { puppeteer: {} }, emit: () => undefined });
    const session = webjsSessionName(userId);
    expect(await store.sessionExists({ session })).toBe(false);

    await (auth as any).beforeBrowserInitialized(); // nothing stored: an empty profile folder
    const profile = join(dataPath, session);
    mkdirSync(join(profile, 'Default', 'Local Storage'), { recursive: true });
    writeFileSync(join(profile, 'Default', 'Local Storage', 'login.ldb'), 'secret-login-state');
    mkdirSync(join(profile, 'Default', 'IndexedDB'), { recursive: true });
    writeFileSync(join(profile, 'Default', 'IndexedDB', 'keys.ldb'), 'secret-keys');
    await (auth as any).storeRemoteSession({ emit: true });
    expect(await store.sessionExists({ session })).toBe(true);
    const [{ size_bytes: goodSize }] = await db.query(`SELECT size_bytes FROM webjs_auth WHERE session = $1`, [
      session,
    ]);
    // Sealed at rest: SQL sees neither the zip nor the names of the files in it; the key opens it.
    const [{ data: row }] = await db.query(`SELECT data FROM webjs_auth WHERE session = $1`, [session]);
    expect(SecretBox.isSealedBytes(row)).toBe(true);
    expect(row.subarray(0, 4).equals(Buffer.from([0x50, 0x4b, 0x03, 0x04]))).toBe(false);
    expect(row.includes(Buffer.from('login.ldb'))).toBe(false);
    const zip = RING.openBytes(row).plain;
    expect(zip.subarray(0, 4).equals(Buffer.from([0x50, 0x4b, 0x03, 0x04]))).toBe(true);
    expect(zip.includes(Buffer.from('login.ldb'))).toBe(true);

    // An empty or non-zip backup never replaces the good one.
    writeFileSync(join(dataPath, `${session}.zip`), '');
    await store.save({ session });
    writeFileSync(join(dataPath, `${session}.zip`), 'x'.repeat(100));
    await store.save({ session });
    const big = new WebjsAuthStore(new WebjsAuthRepository(new Transactions(db)), userId, dataPath, 50, RING);
    writeFileSync(
      join(dataPath, `${session}.zip`),
      Buffer.concat([Buffer.from([0x50, 0x4b, 0x03, 0x04]), Buffer.alloc(100)]),
    );
    await big.save({ session });
    expect(await db.query(`SELECT size_bytes FROM webjs_auth WHERE session = $1`, [session])).toEqual([
      { size_bytes: goodSize },
    ]);
    rmSync(join(dataPath, `${session}.zip`), { force: true });

    // Another replica (an empty disk) gets the same profile back from Postgres, fully written when
    // the browser would start (whatsapp-web.js's own RemoteAuth resolves before the files land).
    rmSync(profile, { recursive: true, force: true });
    await (auth as any).beforeBrowserInitialized();
    expect(readFileSync(join(profile, 'Default', 'Local Storage', 'login.ldb'), 'utf8')).toBe('secret-login-state');
    await store.delete({ session });
    expect(await store.sessionExists({ session })).toBe(false);
  });

  // ---- the library's known behaviour: what whatsapp-web.js 1.34.7 and today's WhatsApp Web actually do

  /** A manager with one linked account, ready to send. */
  const linkedUser = async (userId: string, opts: Parameters<typeof newManager>[0] = {}, phone = '85290000100') => {
    const manager = await newManager(opts);
    await manager.connect(userId, true);
    const client = lastClient();
    client.emit('qr', 'code');
    client.link(phone);
    await waitFor(() => statesOf(userId).includes('ready'), 5000);
    await waitFor(() => client.sent.length === 1, 5000); // the auto-login message
    return { manager, client };
  };
  const ledgerOf = async (userId: string, key: string) =>
    (
      await db.query(`SELECT status, message_id FROM sends WHERE user_id = $1 AND idempotency_key = $2`, [userId, key])
    )[0];
  const failureOf = async (p: Promise<unknown>) =>
    (await p.then(
      () => undefined,
      (e: AppError) => e,
    ))!;

  it('1: ids that carry only $1 are read (sends and acks), sent with waitUntilMsgSent and without marking the chat read', async () => {
    const userId = 'user_dollar1';
    const { manager, client } = await linkedUser(userId, { behaviour: { send: 'dollar1' } });
    const reply = await manager.send({ userId, to: '91230001', text: 'hi', idempotencyKey: 'job-d:91230001' });
    expect(reply).toEqual({
      messageId: 'true_85291230001@c.us_2',
      status: 'sent',
      at: expect.any(String),
      duplicate: false,
    });
    expect(client.sendOptions.at(-1)).toEqual({ waitUntilMsgSent: true, sendSeen: false });
    client.emit('message_ack', { id: { $1: reply.messageId } }, 2);
    await waitFor(() => eventsOf(userId, 'events.message.status').length === 1, 5000);
    expect(eventsOf(userId, 'events.message.status')[0]).toMatchObject({
      status: 'delivered',
      messageId: reply.messageId,
      jobId: 'job-d',
    });
  });

  it('1: a send whose result is undefined (or that fails after the hand-over) is unconfirmed, never sent again', async () => {
    const userId = 'user_undefined';
    const { manager, client } = await linkedUser(userId, { behaviour: { send: 'undefined' } });
    const req = { userId, to: '91230002', text: 'hi', idempotencyKey: 'job-u:91230002' };
    const first = await manager.send(req);
    expect(first).toEqual({
      messageId: '',
      status: 'sent',
      at: expect.any(String),
      duplicate: false,
      unconfirmed: true,
    });
    expect(await ledgerOf(userId, req.idempotencyKey)).toEqual({ status: 'unknown', message_id: null });
    const retry = await manager.send(req);
    expect(retry).toMatchObject({ duplicate: true, unconfirmed: true });
    expect(client.sent.filter((m) => m.text === 'hi')).toHaveLength(1);

    client.behaviour.send = 'throw';
    const thrown = await manager.send({ ...req, idempotencyKey: 'job-u:91230003', to: '91230003' });
    expect(thrown).toMatchObject({ unconfirmed: true });
    await manager.send({ ...req, idempotencyKey: 'job-u:91230003', to: '91230003' });
    expect(client.sent.filter((m) => m.chatId === '85291230003@c.us')).toHaveLength(1);
  });

  it('sends an attachment as a MessageMedia with its caption (documents as documents), fetched once; a refused upload fails the recipient', async () => {
    const userId = 'user_media';
    const { manager, client } = await linkedUser(userId);
    const bytes = Buffer.from('%PDF-1.4\n%%EOF\n');
    const store = await new Objm(nc).create(MEDIA_BUCKET, { storage: StorageType.File });
    await store.putBlob({ name: 'upl_menu' }, bytes);
    const media = {
      mediaId: 'med_menu',
      object: 'upl_menu',
      kind: 'document' as const,
      mime: 'application/pdf',
      sha256: createHash('sha256').update(bytes).digest('hex'),
      size: bytes.length,
      fileName: 'menu.pdf',
    };
    for (const to of ['91240001', '91240002'])
      await manager.send({ userId, to, text: 'Our menu', idempotencyKey: `job-m:${to}`, media });
    const sent = client.sent.filter((m) => m.chatId.startsWith('8529124000'));
    expect(sent).toHaveLength(2);
    expect(sent[0]!.text).toBeInstanceOf(wwebjs.MessageMedia);
    expect(sent[0]!.text).toMatchObject({
      mimetype: 'application/pdf',
      filename: 'menu.pdf',
      data: bytes.toString('base64'),
    });
    expect(client.sendOptions.at(-1)).toEqual({
      caption: 'Our menu',
      sendMediaAsDocument: true,
      waitUntilMsgSent: true,
      sendSeen: false,
    });
    expect(mediaCaches.at(-1)!.fetches).toBe(1);

    client.behaviour.send = 'uploadFails';
    await expect(
      manager.send({ userId, to: '91240003', text: 'Our menu', idempotencyKey: 'job-m:91240003', media }),
    ).rejects.toMatchObject({ kind: ErrorKind.Validation, message: MEDIA_MESSAGES.sendUploadFailed });
    expect(await ledgerOf(userId, 'job-m:91240003')).toMatchObject({ status: 'failed' });
  });

  it('2: an unawaited rejection (as whatsapp-web.js leaves after a logout) does not end the sessions process', async () => {
    // Jest turns an unhandled rejection inside a test into a failure of its own, so the process-level
    // guard is checked in a real Node process running the built guard, with and without it.
    const guard = fileURLToPath(new URL('../dist/process-guards.js', import.meta.url));
    if (!existsSync(guard)) throw new Error(`build the sessions service first (${guard} is missing)`);
    const script = (install: boolean) => `
      const { UnhandledRejectionGuard } = await import(${JSON.stringify(pathToFileURL(guard).href)});
      ${install ? 'new UnhandledRejectionGuard().install();' : ''}
      const reinject = async () => { throw new Error('Execution context was destroyed, most likely because of a navigation. 85291234567'); };
      void reinject();
      setTimeout(() => { console.log('still serving'); process.exit(0); }, 300);`;
    const run = (install: boolean) =>
      spawnSync(process.execPath, ['--input-type=module', '-e', script(install)], {
        encoding: 'utf8',
        timeout: 20_000,
      });
    const guarded = run(true);
    expect([guarded.status, guarded.stdout.trim()]).toEqual([0, 'still serving']);
    expect(guarded.stdout + guarded.stderr).not.toContain('85291234567'); // the log masks numbers
    const unguarded = run(false);
    expect(unguarded.status).not.toBe(0);
    expect(unguarded.stdout).not.toContain('still serving');
  });

  it('2: a phone-side logout ends that link only; the shard keeps serving every other account', async () => {
    const other = await linkedUser('user_bystander');
    const { client } = await linkedUser('user_logout', {}, '85290000101');
    client.phoneLogout();
    await waitFor(() => statesOf('user_logout').includes('disconnected'), 5000);
    expect(eventsOf('user_logout').find((e) => e.state === 'disconnected')).toMatchObject({
      reason: 'phone_unlinked',
      waReason: 'LOGOUT',
    });
    expect(client.calls).toContain('destroy');
    const reply = await other.manager.send({
      userId: 'user_bystander',
      to: '91230004',
      text: 'still here',
      idempotencyKey: 'job-b:91230004',
    });
    expect(reply.duplicate).toBe(false);
    expect(other.client.sent.at(-1)).toEqual({ chatId: '85291230004@c.us', text: 'still here' });
  });

  it('3 and 7: a hanging initialize holds one restore slot until its start deadline, then the browser is closed and reported', async () => {
    const users = ['user_hang_a', 'user_hang_b'];
    for (const u of users) {
      await db.query(`INSERT INTO links (user_id, engine, phone_number) VALUES ($1, 'webjs', '85290000200')`, [u]);
      await db.query(`INSERT INTO webjs_auth (session, user_id, data, size_bytes) VALUES ($1, $2, $3, 3)`, [
        webjsSessionName(u),
        u,
        Buffer.from('zip'),
      ]);
    }
    const before = clients.length;
    const t0 = Date.now();
    await newManager({
      env: { RESTORE_CONCURRENCY: 1 },
      engine: { startTimeoutMs: 600 },
      behaviour: { initialize: 'hang' },
    });
    await waitFor(() => clients.length === before + 1, 5000);
    await new Promise((r) => setTimeout(r, 300));
    expect(clients.length).toBe(before + 1); // the second browser waits for the first
    await waitFor(() => clients.length === before + 2, 5000);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(550);
    expect(clients[before]!.calls).toEqual(['initialize', 'destroy']);
    await waitFor(() => users.every((u) => statesOf(u).includes('disconnected')), 5000);
    for (const u of users)
      expect(eventsOf(u).find((e) => e.state === 'disconnected')).toMatchObject({
        reason: 'engine_failed',
        message: SESSION_MESSAGES.engineFailed,
      });
  });

  it('7: a QR nobody scans ends as qr_max_attempts at its deadline; a scan that never gets ready fails at its own', async () => {
    const manager = await newManager({ engine: { linkTimeoutMs: 400, authTimeoutMs: 400 } });
    expect(await manager.connect('user_noscan', true)).toMatchObject({ state: 'creating' });
    const idle = lastClient();
    idle.emit('qr', 'only-one-qr'); // WhatsApp stopped rotating (refreshQR is gone): no more qr events
    await waitFor(() => statesOf('user_noscan').includes('qr_max_attempts'), 5000);
    expect(idle.calls).toEqual(['initialize', 'destroy']);

    await manager.connect('user_stuck', true);
    const stuck = lastClient();
    stuck.emit('qr', 'code');
    stuck.emit('loading_screen', 10, 'WhatsApp');
    await waitFor(() => statesOf('user_stuck').includes('disconnected'), 5000);
    expect(statesOf('user_stuck')).toEqual(['qr', 'creating', 'disconnected']);
    expect(stuck.calls).toEqual(['initialize', 'destroy']);
    expect(await manager.status('user_stuck')).toEqual({ state: 'no_session' });
  });

  it('4: duplicate ready starts one backup timer; destroy and logout stop them; an empty profile zip is refused', async () => {
    const userId = 'user_timers';
    const store = new WebjsAuthStore(
      new WebjsAuthRepository(new Transactions(db)),
      userId,
      dataPath,
      1024 * 1024,
      RING,
    );
    const auth = new SafeRemoteAuth({ clientId: userId, store, dataPath, backupSyncIntervalMs: 60_000 });
    (auth as any).setup({ options: { puppeteer: {} }, emit: () => undefined });
    (auth as any).backupSyncIntervalMs = 300; // the library allows ≥ 60 s; the timers behave the same
    const session = webjsSessionName(userId);
    await (auth as any).beforeBrowserInitialized();
    const profile = join(dataPath, session);
    for (const dir of ['Local Storage', 'IndexedDB']) {
      mkdirSync(join(profile, 'Default', dir), { recursive: true });
      writeFileSync(join(profile, 'Default', dir, 'data.ldb'), 'login');
    }
    await (auth as any).storeRemoteSession({ emit: true });
    const saves = jest.spyOn(auth as any, 'storeRemoteSession');

    // The library calls afterAuthReady on every ready, without awaiting it.
    void (auth as any).afterAuthReady();
    void (auth as any).afterAuthReady();
    await new Promise((r) => setTimeout(r, 1050));
    await auth.destroy();
    const whileRunning = saves.mock.calls.length;
    expect(whileRunning).toBeGreaterThanOrEqual(2);
    expect(whileRunning).toBeLessThanOrEqual(4); // one 300 ms interval in 1 s, not two (6)
    await new Promise((r) => setTimeout(r, 400));
    expect(saves.mock.calls.length).toBe(whileRunning);

    // After a logout the backup is gone for good: no leaked timer puts it back.
    await (auth as any).beforeBrowserInitialized();
    void (auth as any).afterAuthReady();
    await (auth as any).logout();
    expect(await store.sessionExists({ session })).toBe(false);
    await new Promise((r) => setTimeout(r, 400));
    expect(await store.sessionExists({ session })).toBe(false);

    // A profile zipped after the logout has a valid header and no login in it.
    const empty = new SafeRemoteAuth({
      clientId: `${userId}_empty`,
      store: new WebjsAuthStore(new WebjsAuthRepository(new Transactions(db)), userId, dataPath, 1024 * 1024, RING),
      dataPath,
      backupSyncIntervalMs: 60_000,
    });
    (empty as any).setup({ options: { puppeteer: {} }, emit: () => undefined });
    await (empty as any).beforeBrowserInitialized();
    await (empty as any).storeRemoteSession({ emit: true });
    expect(
      await db.query(`SELECT 1 FROM webjs_auth WHERE session = $1`, [webjsSessionName(`${userId}_empty`)]),
    ).toHaveLength(0);
  });

  it('5: ack -1 in the send result is a permanent failure; a late ack -1 is reported as failed', async () => {
    const userId = 'user_ackerror';
    const { manager, client } = await linkedUser(userId, { behaviour: { send: 'ackError' } });
    const req = { userId, to: '91230005', text: 'hi', idempotencyKey: 'job-e:91230005' };
    const refused = await failureOf(manager.send(req));
    expect([refused.kind, refused.code, refused.message]).toEqual([
      ErrorKind.Validation,
      SessionsErrorCode.SendRejected,
      SESSION_MESSAGES.sendRejected,
    ]);
    expect((await failureOf(manager.send(req))).code).toBe(SessionsErrorCode.SendRejected);
    expect(client.sent.filter((m) => m.text === 'hi')).toHaveLength(1);

    client.behaviour.send = 'normal';
    const ok = await manager.send({ ...req, to: '91230006', idempotencyKey: 'job-e:91230006' });
    client.emit('message_ack', { id: { _serialized: ok.messageId } }, -1);
    await waitFor(() => eventsOf(userId, 'events.message.status').some((e) => e.status === 'failed'), 5000);
    // Accepted, then refused (a 463 / reach-out refusal): failed in plain words, marked as a refusal.
    expect(eventsOf(userId, 'events.message.status').find((e) => e.status === 'failed')).toMatchObject({
      recipient: '91230006',
      error: SESSION_MESSAGES.sendRefusedAfterAccept,
      refused: true,
    });
  });

  it('5: a send WhatsApp never acknowledges (ack stays 0) is failed after the server-ack time-out; one acknowledged in time is not', async () => {
    const userId = 'user_noserverack';
    const { manager, client } = await linkedUser(userId, {
      behaviour: { send: 'pending' },
      engine: { serverAckTimeoutMs: 300 },
    });
    const silent = await manager.send({ userId, to: '91230021', text: 'a', idempotencyKey: 'job-s:91230021' });
    const acked = await manager.send({ userId, to: '91230022', text: 'b', idempotencyKey: 'job-s:91230022' });
    // The library's sequence for a message the server took: ack 1 (server), then 2 (device).
    client.emit('message_ack', { id: { _serialized: acked.messageId } }, 1);
    client.emit('message_ack', { id: { _serialized: acked.messageId } }, 2);
    await waitFor(() => eventsOf(userId, 'events.message.status').some((e) => e.status === 'failed'), 5000);
    await new Promise((r) => setTimeout(r, 500));
    const statuses = eventsOf(userId, 'events.message.status').map((e) => [e.recipient, e.status, e.error]);
    expect(statuses).toEqual(
      expect.arrayContaining([
        ['91230021', 'failed', SESSION_MESSAGES.sendNotConfirmed],
        ['91230022', 'delivered', undefined],
      ]),
    );
    expect(statuses.filter(([, status]) => status === 'failed')).toHaveLength(1);
    expect(silent.messageId).not.toBe('');
  });

  it('6: a send that hangs is unconfirmed within SEND_TIMEOUT_MS (never free to resend); a hanging lookup is retried', async () => {
    const userId = 'user_hangsend';
    const { manager, client } = await linkedUser(userId, { env: { SEND_TIMEOUT_MS: 500 } as Partial<SessionsEnv> });
    client.behaviour.send = 'hang';
    const req = { userId, to: '91230007', text: 'hi', idempotencyKey: 'job-h:91230007' };
    const t0 = Date.now();
    expect(await manager.send(req)).toMatchObject({ unconfirmed: true, duplicate: false });
    expect(Date.now() - t0).toBeLessThan(1500);
    expect(await ledgerOf(userId, req.idempotencyKey)).toEqual({ status: 'unknown', message_id: null });
    expect(await manager.send(req)).toMatchObject({ unconfirmed: true, duplicate: true });
    expect(client.sent.filter((m) => m.text === 'hi')).toHaveLength(1);

    client.behaviour.send = 'normal';
    client.behaviour.lookupHangs = true;
    const lookup = { ...req, to: '91230008', idempotencyKey: 'job-h:91230008' };
    const slow = await failureOf(manager.send(lookup));
    expect([slow.kind, slow.message]).toEqual([ErrorKind.Unavailable, SESSION_MESSAGES.whatsappSlow]);
    expect(await ledgerOf(userId, lookup.idempotencyKey)).toBeUndefined(); // nothing was handed over: retry
    client.behaviour.lookupHangs = false;
    expect(await manager.send(lookup)).toMatchObject({
      duplicate: false,
      messageId: expect.stringContaining('85291230008@c.us'),
    });
    expect(client.sent.filter((m) => m.chatId === '85291230008@c.us')).toHaveLength(1);
  });

  it("8: WhatsApp's disconnect reason is passed through with a plain message (a ban, another browser)", async () => {
    for (const [userId, waReason, reason, message] of [
      ['user_banned', 'TOS_BLOCK', DISCONNECT_REASONS.banned, SESSION_MESSAGES.disconnectBanned],
      [
        'user_banned_smb',
        'SMB_TOS_BLOCK',
        DISCONNECT_REASONS.bannedBusiness,
        SESSION_MESSAGES.disconnectBannedBusiness,
      ],
      ['user_conflict', 'CONFLICT', DISCONNECT_REASONS.conflict, SESSION_MESSAGES.disconnectConflict],
      [
        'user_deprecated',
        'DEPRECATED_VERSION',
        DISCONNECT_REASONS.deprecatedVersion,
        SESSION_MESSAGES.disconnectDeprecatedVersion,
      ],
    ] as const) {
      const { client } = await linkedUser(userId);
      client.emit('disconnected', waReason);
      await waitFor(() => statesOf(userId).includes('disconnected'), 5000);
      expect(eventsOf(userId).find((e) => e.state === 'disconnected')).toMatchObject({ reason, message, waReason });
    }
  });

  it('9: the first loading_screen (right after the scan) shows "finalizing"; a later authenticated changes nothing', async () => {
    const manager = await newManager();
    const userId = 'user_loading';
    await manager.connect(userId, true);
    const client = lastClient();
    client.emit('qr', 'code');
    client.emit('loading_screen', 0, 'WhatsApp');
    await waitFor(() => statesOf(userId).includes('creating'), 5000);
    expect(eventsOf(userId).find((e) => e.state === 'creating')).toMatchObject({
      message: SESSION_MESSAGES.creatingFinalizing,
    });
    client.emit('loading_screen', 50, 'WhatsApp');
    client.link('85290000102');
    await waitFor(() => statesOf(userId).includes('ready'), 5000);
    expect(statesOf(userId)).toEqual(['qr', 'creating', 'ready']);
  });

  it('10: a LID account is shown and welcomed at its phone number; an unresolvable LID gets no welcome', async () => {
    const lid = { user: '123456789012345', server: 'lid', $1: '123456789012345@lid' };
    const manager = await newManager({ behaviour: { lidPhones: { '123456789012345@lid': '85290000103@c.us' } } });
    await manager.connect('user_lid', true);
    const client = lastClient();
    client.link('ignored', lid);
    await waitFor(() => statesOf('user_lid').includes('ready'), 5000);
    expect(eventsOf('user_lid').find((e) => e.state === 'ready')).toMatchObject({ phoneNumber: '85290000103' });
    await waitFor(() => client.sent.length === 1, 5000);
    expect(client.sent[0]!.chatId).toBe('85290000103@c.us');

    const unresolved = await newManager();
    await unresolved.connect('user_lid_unknown', true);
    const other = lastClient();
    other.link('ignored', { user: '999999999999999', server: 'lid' });
    await waitFor(() => statesOf('user_lid_unknown').includes('ready'), 5000);
    expect(eventsOf('user_lid_unknown').find((e) => e.state === 'ready')!.phoneNumber).toBe('');
    await new Promise((r) => setTimeout(r, 500));
    expect(other.sent).toHaveLength(0);
  });

  it('one-to-one messages to the account become events.message.received (a LID sender with its number when known); groups, status and our own do not', async () => {
    const userId = 'user_inbound';
    const { client, manager } = await linkedUser(userId, {
      behaviour: { lidPhones: { '555000111222333@lid': '85291230010@c.us' } },
    });
    const message = (from: string, body: string, extra: Record<string, unknown> = {}) => ({
      id: { $1: `false_${from}_${body}` },
      from,
      body,
      fromMe: false,
      timestamp: 1_800_000_000,
      ...extra,
    });
    client.emit('message', message('120363000000000000@g.us', 'group chatter'));
    client.emit('message', message('status@broadcast', 'a status', { isStatus: true }));
    client.emit('message', message('85291230011@c.us', 'sent from the phone', { fromMe: true }));
    client.emit('message', message('999999999999999@lid', 'unknown lid'));
    client.emit('message', message('85291230012@c.us', 'STOP'));
    client.emit('message', message('555000111222333@lid', 'hello from a lid'));
    await waitFor(() => eventsOf(userId, 'events.message.received').length === 3, 5000);
    await new Promise((r) => setTimeout(r, 300));
    // In arrival order per user; the LID sender's number is looked up first, so compare as a set.
    // A LID WhatsApp will not resolve comes with its LID and no number (never a guess).
    expect(
      eventsOf(userId, 'events.message.received')
        .map((e) => [e.from, e.lid, e.text, e.messageId, e.at])
        .sort(),
    ).toEqual([
      [
        '',
        '999999999999999@lid',
        'unknown lid',
        'false_999999999999999@lid_unknown lid',
        new Date(1_800_000_000_000).toISOString(),
      ],
      [
        '85291230010',
        '555000111222333@lid',
        'hello from a lid',
        'false_555000111222333@lid_hello from a lid',
        new Date(1_800_000_000_000).toISOString(),
      ],
      ['85291230012', undefined, 'STOP', 'false_85291230012@c.us_STOP', new Date(1_800_000_000_000).toISOString()],
    ]);
    // The pair WhatsApp gave is kept for the account.
    expect(await db.query(`SELECT lid, phone FROM lid_phones WHERE user_id = $1`, [userId])).toEqual([
      { lid: '555000111222333@lid', phone: '85291230010' },
    ]);

    // A LID-only reply that quotes one of our messages is matched by that message (the library's
    // hasQuotedMsg / getQuotedMessage), and a receipt addressed to a LID carries it.
    const sentMsg = await manager.send({ userId, to: '91230013', text: 'offer', idempotencyKey: 'job-q:91230013' });
    client.emit('message_ack', { id: { _serialized: sentMsg.messageId }, to: '777000111222333@lid' }, 2);
    client.emit(
      'message',
      message('888000111222333@lid', 'STOP', {
        hasQuotedMsg: true,
        getQuotedMessage: async () => ({ id: { _serialized: sentMsg.messageId } }),
      }),
    );
    await waitFor(() => eventsOf(userId, 'events.message.received').length === 4, 5000);
    expect(eventsOf(userId, 'events.message.received').at(-1)).toMatchObject({
      from: '85291230013',
      lid: '888000111222333@lid',
      quotedMessageId: sentMsg.messageId,
    });
    await waitFor(() => eventsOf(userId, 'events.message.status').some((e) => e.lid === '777000111222333@lid'), 5000);
  });
});
