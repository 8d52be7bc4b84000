import { EventEmitter } from 'node:events';
import { mkdtempSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { NatsConnection } from '@nats-io/transport-node';
import type { DataSource } from 'typeorm';
import { ErrorKind, LIMITS, SESSION_MESSAGES, SessionsErrorCode, type EventEnvelope } from '@bns/contracts';
import { AppError, connectNats, ensureEventsStream, EventBus, openDatabase, RpcClient } from '@bns/service-kit';
import { startNats, startPostgres, waitFor, type Nats, type Postgres } from '@bns/testing';
import type { SessionsEnv } from '../src/config/env.js';
import { CreateSessions1763769600000 } from '../src/database/migrations/1763769600000-create-sessions.js';
import { SafeRemoteAuth } from '../src/sessions/engines/safe-remote-auth.js';
import { WebjsAuthStore, webjsSessionName } from '../src/sessions/engines/webjs-auth.store.js';
import { WebjsEngine, type WebjsClientArgs, type WebjsClientLike } from '../src/sessions/engines/webjs.engine.js';
import { LinksRepository } from '../src/sessions/links.repository.js';
import { SendLedger } from '../src/sessions/send-ledger.service.js';
import { SessionEvents } from '../src/sessions/session-events.js';
import { SessionManager } from '../src/sessions/session-manager.service.js';

/** A whatsapp-web.js Client stand-in: the test plays WhatsApp by emitting the Client's events. */
class FakeClient extends EventEmitter implements WebjsClientLike {
  info: { wid: { user: string } } | null = null;
  readonly calls: string[] = [];
  readonly sent: { chatId: string; text: string }[] = [];
  constructor(readonly args: WebjsClientArgs) {
    super();
  }
  async initialize() {
    this.calls.push('initialize');
  }
  async destroy() {
    this.calls.push('destroy');
  }
  async logout() {
    this.calls.push('logout');
  }
  async getNumberId(number: string) {
    return number === '85299999999' ? null : { _serialized: `${number}@c.us` };
  }
  async sendMessage(chatId: string, text: string) {
    this.sent.push({ chatId, text });
    return { id: { _serialized: `true_${chatId}_${this.sent.length}` }, timestamp: Math.floor(Date.now() / 1000) };
  }
  link(phone: string) {
    this.emit('authenticated');
    this.info = { wid: { user: phone } };
    this.emit('ready');
  }
}

const ENV = {
  SHARD_INDEX: 0,
  SESSIONS_SHARDS: 1,
  WA_ENGINE: 'webjs',
  RESTORE_CONCURRENCY: 2,
  AUTO_LOGIN_PREF_TIMEOUT_MS: 200,
} as unknown as SessionsEnv;

describe('webjs engine against a fake whatsapp-web.js Client (real Postgres and NATS)', () => {
  let pg: Postgres;
  let nats: Nats;
  let db: DataSource;
  let nc: NatsConnection;
  let dataPath: string;
  const events: (EventEnvelope & Record<string, any>)[] = [];
  const clients: FakeClient[] = [];
  const managers: SessionManager[] = [];

  const newManager = async () => {
    const engine = new WebjsEngine(db, { chromiumPath: '/nonexistent', dataPath, backupSyncIntervalMs: 60_000, authMaxBytes: 1024 * 1024, headless: true }, (args) => {
      const c = new FakeClient(args);
      clients.push(c);
      return c;
    });
    const sessionEvents = new SessionEvents(new EventBus(nc));
    const manager = new SessionManager(engine, ENV, new LinksRepository(db), new SendLedger(db, sessionEvents), sessionEvents, new RpcClient(nc, { shards: 1, timeoutMs: 1000 }), db);
    managers.push(manager);
    await manager.onApplicationBootstrap();
    return manager;
  };
  const eventsOf = (userId: string, subject?: string) => events.filter((e) => e.userId === userId && (!subject || e.subject === subject));
  const statesOf = (userId: string) => eventsOf(userId, 'events.session.state').map((e) => e.state);
  const lastClient = () => clients[clients.length - 1]!;

  beforeAll(async () => {
    [pg, nats] = await Promise.all([startPostgres(), startNats()]);
    db = await openDatabase({ url: pg.url, schema: 'sessions', entities: [], migrations: [CreateSessions1763769600000] });
    nc = await connectNats(nats.url, 'webjs-test');
    await ensureEventsStream(nc);
    nc.subscribe('events.>', { callback: (_e, msg) => void events.push({ ...msg.json<EventEnvelope>(), subject: msg.subject }) });
    dataPath = mkdtempSync(join(tmpdir(), 'bns-wwebjs-'));
  }, 60_000);

  afterAll(async () => {
    for (const m of managers) await m.beforeApplicationShutdown();
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
    expect(eventsOf(userId).find((e) => e.state === 'qr_max_attempts')).toMatchObject({ message: SESSION_MESSAGES.qrMaxAttempts, attempts: 5 });
    expect(client.calls).toEqual(['initialize', 'destroy']);
    expect(await manager.status(userId)).toEqual({ state: 'no_session' });
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
    expect(reply).toEqual({ messageId: 'true_85291234567@c.us_2', status: 'sent', at: expect.any(String), duplicate: false });
    expect((await manager.send({ userId, to: '91234567', text: 'hi', idempotencyKey: 'job-w:91234567' })).duplicate).toBe(true);
    expect(client.sent).toHaveLength(2);

    const refused = (await manager.send({ userId, to: '99999999', text: 'hi', idempotencyKey: 'job-w:99999999' }).catch((e: AppError) => e)) as AppError;
    expect([refused.kind, refused.code, refused.message]).toEqual([ErrorKind.Validation, SessionsErrorCode.NotOnWhatsApp, 'number is not on WhatsApp']);

    const msg = { id: { _serialized: reply.messageId } };
    client.emit('message_ack', msg, 1); // server ack = sent: the jobs service reports sent itself
    client.emit('message_ack', msg, 2);
    client.emit('message_ack', msg, 3);
    await waitFor(() => eventsOf(userId, 'events.message.status').length === 2, 5000);
    expect(eventsOf(userId, 'events.message.status').map((e) => [e.status, e.jobId, e.recipient, e.idempotencyKey, e.messageId, e.content])).toEqual([
      ['delivered', 'job-w', '91234567', 'job-w:91234567', reply.messageId, 'hi'],
      ['read', 'job-w', '91234567', 'job-w:91234567', reply.messageId, 'hi'],
    ]);

    client.emit('disconnected', 'LOGOUT');
    await waitFor(() => statesOf(userId).includes('disconnected'), 5000);
    expect(eventsOf(userId).find((e) => e.state === 'disconnected')).toMatchObject({ reason: 'phone_unlinked' });
    expect(client.calls).toContain('destroy');
    expect(await db.query(`SELECT 1 FROM links WHERE user_id = $1`, [userId])).toHaveLength(0);
    const notLinked = (await manager.send({ userId, to: '91234568', text: 'x', idempotencyKey: 'job-w:91234568' }).catch((e: AppError) => e)) as AppError;
    expect([notLinked.kind, notLinked.code]).toEqual([ErrorKind.Conflict, SessionsErrorCode.NotLinked]);
  });

  it('cleanup logs the client out, destroys it and deletes the stored login', async () => {
    const manager = await newManager();
    const userId = 'user_cleanup';
    await manager.connect(userId, true);
    const client = lastClient();
    client.link('85290000002');
    await waitFor(() => statesOf(userId).includes('ready'), 5000);
    await db.query(`INSERT INTO webjs_auth (session, user_id, data, size_bytes) VALUES ($1, $2, $3, 3)`, [webjsSessionName(userId), userId, Buffer.from('zip')]);

    expect(await manager.logout(userId)).toEqual({ sessionsCleanedUp: 1 });
    expect(client.calls).toEqual(['initialize', 'logout', 'destroy']);
    expect(await db.query(`SELECT 1 FROM webjs_auth WHERE user_id = $1`, [userId])).toHaveLength(0);
    expect(await manager.logout(userId)).toEqual({ sessionsCleanedUp: 0 });
  });

  it('restores a stored link on start without a QR, and forgets a link whose login never reached the store', async () => {
    const restorable = 'user_restore';
    const unsaved = 'user_unsaved';
    await db.query(`INSERT INTO links (user_id, engine, phone_number) VALUES ($1, 'webjs', '85290000003'), ($2, 'webjs', '85290000004')`, [restorable, unsaved]);
    await db.query(`INSERT INTO webjs_auth (session, user_id, data, size_bytes) VALUES ($1, $2, $3, 3)`, [webjsSessionName(restorable), restorable, Buffer.from('zip')]);
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
    const store = new WebjsAuthStore(db, userId, dataPath, 1024 * 1024);
    const auth = new SafeRemoteAuth({ clientId: userId, store, dataPath, backupSyncIntervalMs: 60_000 });
    (auth as any).setup({ options: { puppeteer: {} }, emit: () => undefined });
    const session = webjsSessionName(userId);
    expect(await store.sessionExists({ session })).toBe(false);

    await (auth as any).beforeBrowserInitialized(); // nothing stored: an empty profile folder
    const profile = join(dataPath, session);
    mkdirSync(join(profile, 'Default', 'Local Storage'), { recursive: true });
    writeFileSync(join(profile, 'Default', 'Local Storage', 'login.ldb'), 'secret-login-state');
    await (auth as any).storeRemoteSession({ emit: true });
    expect(await store.sessionExists({ session })).toBe(true);
    const [{ size_bytes: goodSize }] = await db.query(`SELECT size_bytes FROM webjs_auth WHERE session = $1`, [session]);

    // An empty or non-zip backup never replaces the good one.
    writeFileSync(join(dataPath, `${session}.zip`), '');
    await store.save({ session });
    writeFileSync(join(dataPath, `${session}.zip`), 'x'.repeat(100));
    await store.save({ session });
    const big = new WebjsAuthStore(db, userId, dataPath, 50);
    writeFileSync(join(dataPath, `${session}.zip`), Buffer.concat([Buffer.from([0x50, 0x4b, 0x03, 0x04]), Buffer.alloc(100)]));
    await big.save({ session });
    expect(await db.query(`SELECT size_bytes FROM webjs_auth WHERE session = $1`, [session])).toEqual([{ size_bytes: goodSize }]);
    rmSync(join(dataPath, `${session}.zip`), { force: true });

    // Another replica (an empty disk) gets the same profile back from Postgres, fully written when
    // the browser would start (whatsapp-web.js's own RemoteAuth resolves before the files land).
    rmSync(profile, { recursive: true, force: true });
    await (auth as any).beforeBrowserInitialized();
    expect(readFileSync(join(profile, 'Default', 'Local Storage', 'login.ldb'), 'utf8')).toBe('secret-login-state');
    await store.delete({ session });
    expect(await store.sessionExists({ session })).toBe(false);
  });
});
