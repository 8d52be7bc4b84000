import { randomUUID } from 'node:crypto';
import { Inject, Injectable, Logger, type BeforeApplicationShutdown, type OnApplicationBootstrap } from '@nestjs/common';
import { AppError, RpcClient, SERVICE_ENV } from '@bns/service-kit';
import {
  DISCONNECT_REASONS,
  ErrorKind,
  LIMITS,
  SESSION_MESSAGES,
  SessionsErrorCode,
  normalizePhone,
  shardOf,
  type CleanupFailure,
  type CleanupStep,
  type SessionLogoutReply,
  type SessionSendReply,
  type SessionSendRequest,
  type SessionStatusReply,
  type SimulatorInboundReply,
  type SimulatorInboundRequest,
  type SimulatorOutboxReply,
  type SimulatorScanReply,
  whatsappDisconnect,
} from '@bns/contracts';
import type { SessionsEnv } from '../config/env.js';
import { safeError } from '../redact.js';
import { isSimulatorControls, PhaseTimeoutError, WA_ENGINE, type AckStatus, type EngineListener, type EngineSession, type WaEngine } from './engines/engine.types.js';
import { SimOutboxRepository } from './engines/sim-outbox.repository.js';
import { LinksRepository, type LinkRow } from './links.repository.js';
import { MessageEvents } from './message-events.service.js';
import { SendLedger } from './send-ledger.service.js';
import { restoreFinished, restoreStarted } from '../metrics/sessions.metrics.js';
import { SessionEvents } from './session-events.js';

/**
 * Where one user's link is. No entry at all means no session (every stored link of this shard is
 * restored at start, and looked up again on demand).
 * - linking: the engine shows QR codes, waiting for a scan;
 * - authenticating: scanned, WhatsApp is finishing the link;
 * - restoring: a stored link is being brought back without a scan;
 * - ready: linked, sends go out.
 */
type Phase = 'linking' | 'authenticating' | 'restoring' | 'ready';

interface UserSession {
  userId: string;
  sessionId: string;
  phase: Phase;
  engine?: EngineSession;
  attempts: number;
  lastQr?: string;
  phoneNumber?: string;
}

/**
 * One state machine per user, on the user's shard. Every change of a user's state runs in that user's
 * queue, so a second tab, a timer and a browser event never interleave half-way.
 */
@Injectable()
export class SessionManager implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger('SessionManager');
  private readonly sessions = new Map<string, UserSession>();
  private readonly queues = new Map<string, Promise<unknown>>();
  private shuttingDown = false;

  constructor(
    @Inject(WA_ENGINE) private readonly engine: WaEngine,
    @Inject(SERVICE_ENV) private readonly env: SessionsEnv,
    private readonly links: LinksRepository,
    private readonly ledger: SendLedger,
    private readonly events: SessionEvents,
    private readonly rpc: RpcClient,
    private readonly simOutbox: SimOutboxRepository,
    private readonly messageEvents: MessageEvents,
  ) {}

  // ---- lifecycle -------------------------------------------------------------------------------

  /** Restores every stored link this shard owns, a few at a time (each webjs restore is a browser). */
  async onApplicationBootstrap(): Promise<void> {
    const owned = (await this.links.all(this.engine.name)).filter((l) => this.owns(l.userId));
    for (const link of owned) this.sessions.set(link.userId, this.restoringSession(link));
    this.logger.log(`restoring ${owned.length} stored link(s) on shard ${this.env.SHARD_INDEX}/${this.env.SESSIONS_SHARDS}`);
    void this.restoreAll(owned);
  }

  async beforeApplicationShutdown(): Promise<void> {
    this.shuttingDown = true;
    // Stop the engines but keep every stored login: the next replica of this shard restores them.
    await Promise.allSettled([...this.sessions.values()].map((s) => s.engine?.destroy()));
    this.sessions.clear();
  }

  /** Linked users held by this process (the memory benchmark reads it through sessions.status). */
  get size(): number {
    return this.sessions.size;
  }

  // ---- requests --------------------------------------------------------------------------------

  /** createSession: announce the state to the user's room; explicit requests start or join a link. */
  connect(userId: string, explicit: boolean): Promise<SessionStatusReply> {
    return this.owned(userId, async () => {
      const s = await this.current(userId);
      if (s?.phase === 'ready') {
        await this.events.state(userId, { state: 'exist', sessionId: s.sessionId, phoneNumber: s.phoneNumber });
        return { state: 'exist', sessionId: s.sessionId, phoneNumber: s.phoneNumber };
      }
      if (s?.phase === 'restoring' || s?.phase === 'authenticating') {
        const message = s.phase === 'restoring' ? SESSION_MESSAGES.creatingRestoring : SESSION_MESSAGES.creatingFinalizing;
        await this.events.state(userId, { state: 'creating', sessionId: s.sessionId, message });
        return { state: 'creating', sessionId: s.sessionId };
      }
      if (s?.phase === 'linking') {
        // A second tab joins the link in progress: same engine, the QR currently showing.
        if (!explicit) await this.events.state(userId, { state: 'creating', sessionId: s.sessionId, message: SESSION_MESSAGES.creatingInProgress });
        if (s.lastQr) await this.events.state(userId, { state: 'qr', sessionId: s.sessionId, qr: s.lastQr, attempts: s.attempts });
        return { state: s.lastQr ? 'qr' : 'creating', sessionId: s.sessionId };
      }
      if (!explicit) {
        await this.events.state(userId, { state: 'no_session' });
        return { state: 'no_session' };
      }
      const session: UserSession = { userId, sessionId: randomUUID(), phase: 'linking', attempts: 0 };
      this.sessions.set(userId, session);
      // Not awaited: the browser may take longer to show a QR than the caller waits for this answer.
      void this.startEngine(session);
      return { state: 'creating', sessionId: session.sessionId };
    });
  }

  status(userId: string): Promise<SessionStatusReply> {
    return this.owned(userId, async () => {
      const s = await this.current(userId);
      if (!s) return { state: 'no_session' };
      if (s.phase === 'ready') return { state: 'exist', sessionId: s.sessionId, phoneNumber: s.phoneNumber };
      if (s.phase === 'linking' && s.lastQr) return { state: 'qr', sessionId: s.sessionId };
      return { state: 'creating', sessionId: s.sessionId };
    });
  }

  async send(req: SessionSendRequest): Promise<SessionSendReply> {
    this.ledger.validate(req);
    this.assertOwned(req.userId);
    const engine = await this.readyEngine(req.userId);
    return this.ledger.send(req.userId, req, engine);
  }

  /**
   * Sign-out cleanup: unlink, drop the stored link and login; 0 when there was nothing. Every step runs
   * even when an earlier one failed, and a failed step is reported (not swallowed), so the caller can
   * tell a partial cleanup from a full one.
   */
  logout(userId: string): Promise<SessionLogoutReply> {
    return this.owned(userId, async () => {
      const s = this.sessions.get(userId);
      this.sessions.delete(userId);
      const failures: CleanupFailure[] = [];
      const attempt = async <T>(step: CleanupStep, message: string, fn: () => Promise<T>): Promise<T | undefined> => {
        try {
          return await fn();
        } catch (err) {
          this.logger.warn({ err: safeError(err), userId, step }, 'cleanup step failed');
          failures.push({ step, message });
          return undefined;
        }
      };
      if (s?.engine) {
        const engine = s.engine;
        await attempt('whatsapp_logout', SESSION_MESSAGES.cleanupWhatsappLogoutFailed, () => engine.logout());
      }
      const deletedLinks = (await attempt('stored_link', SESSION_MESSAGES.cleanupStoredLinkFailed, () => this.links.delete(userId))) ?? 0;
      await attempt('stored_login', SESSION_MESSAGES.cleanupStoredLoginFailed, () => this.engine.deleteStoredAuth(userId));
      const found = s !== undefined || deletedLinks > 0;
      if (found) await this.events.state(userId, { state: 'disconnected', sessionId: s?.sessionId, reason: DISCONNECT_REASONS.logout });
      return { sessionsCleanedUp: found && failures.length === 0 ? 1 : 0, ...(failures.length > 0 ? { failures } : {}) };
    });
  }

  // ---- dev simulator ---------------------------------------------------------------------------

  simulatorScan(userId: string): Promise<SimulatorScanReply> {
    this.assertSimulated();
    return this.owned(userId, async () => {
      const s = this.sessions.get(userId);
      if (s?.phase !== 'linking' || !s.engine || !isSimulatorControls(s.engine)) {
        throw AppError.conflict(SessionsErrorCode.NoPendingLink, SESSION_MESSAGES.noPendingLink);
      }
      return { sessionId: s.sessionId, phoneNumber: s.engine.scan() };
    });
  }

  simulatorDisconnect(userId: string): Promise<{ disconnected: true }> {
    this.assertSimulated();
    return this.owned(userId, async () => {
      const s = await this.current(userId);
      if (!s?.engine || !isSimulatorControls(s.engine) || s.phase !== 'ready') {
        throw AppError.conflict(SessionsErrorCode.NothingToDisconnect, SESSION_MESSAGES.nothingToDisconnect);
      }
      s.engine.phoneUnlink();
      return { disconnected: true };
    });
  }

  /** The simulated phone receives a message from `from`: it reaches the user as `events.message.received`. */
  simulatorInbound(req: SimulatorInboundRequest): Promise<SimulatorInboundReply> {
    this.assertSimulated();
    const errors: Record<string, string> = {};
    const from = normalizePhone(req?.from, 'international') ?? '';
    if (typeof req?.from !== 'string' || !/^\d{8,15}$/.test(from)) errors.from = 'from must be 8 to 15 digits';
    if (typeof req?.text !== 'string' || req.text.trim() === '') errors.text = 'text is required';
    else if (req.text.length > LIMITS.messageMaxLength) errors.text = `text must be ${LIMITS.messageMaxLength} characters or less`;
    else if (req.text.includes('\u0000')) errors.text = 'text must not contain NUL characters';
    if (Object.keys(errors).length > 0) return Promise.reject(AppError.validation(SessionsErrorCode.InvalidRequest, Object.values(errors).join('; '), errors));
    return this.owned(req.userId, async () => {
      const s = await this.current(req.userId);
      if (s?.phase !== 'ready' || !s.engine || !isSimulatorControls(s.engine)) throw AppError.conflict(SessionsErrorCode.NotLinked, SESSION_MESSAGES.notLinked);
      const { messageId, at } = s.engine.receive(from, req.text);
      return { messageId, at: at.toISOString() };
    });
  }

  async simulatorOutbox(userId: string): Promise<SimulatorOutboxReply> {
    this.assertSimulated();
    const rows = await this.simOutbox.list(userId);
    return { messages: rows.map((r) => ({ to: r.toNumber, text: r.text, idempotencyKey: r.idempotencyKey, at: new Date(r.sentAt).toISOString() })) };
  }

  // ---- engine events ---------------------------------------------------------------------------

  private listenerFor(session: UserSession): EngineListener {
    // Events of an engine that was replaced or torn down are ignored.
    const on = (what: string, fn: (s: UserSession) => Promise<void>) =>
      void this.serial(session.userId, async () => {
        if (this.sessions.get(session.userId) !== session || this.shuttingDown) return;
        await fn(session);
      }).catch((err: unknown) => this.logger.error({ err: safeError(err), userId: session.userId, what }, 'engine event failed'));
    return {
      qr: (qr) => on('qr', (s) => this.onQr(s, qr)),
      authenticated: () => on('authenticated', (s) => this.onAuthenticated(s)),
      ready: (phone) => on('ready', (s) => this.onReady(s, phone)),
      disconnected: (waReason) =>
        on('disconnected', (s) => {
          const { reason, message } = whatsappDisconnect(waReason);
          return this.endLink(s, reason, { message, waReason });
        }),
      authFailure: () => on('auth_failure', (s) => this.endLink(s, DISCONNECT_REASONS.authLost, { message: SESSION_MESSAGES.authLost })),
      failed: (error) => on('failed', (s) => this.onFailed(s, error)),
      // Receipts and inbound messages do not touch the link's state: they go straight to the durable
      // outbox (retried through a Postgres outage), outside the user's queue.
      ack: (messageId, status: AckStatus) => void this.messageEvents.recordAck(session.userId, messageId, status),
      incoming: (from, text, at, messageId) => void this.messageEvents.recordInbound(session.userId, { from, text, at, messageId }),
    };
  }

  private async onQr(s: UserSession, qr: string): Promise<void> {
    if (s.phase === 'restoring') {
      // WhatsApp asks for a scan: the stored login is no longer valid.
      await this.endLink(s, DISCONNECT_REASONS.authLost, { message: SESSION_MESSAGES.authLost });
      return;
    }
    if (s.phase !== 'linking') return;
    if (s.attempts >= LIMITS.qrMaxAttempts) {
      this.sessions.delete(s.userId);
      await s.engine?.destroy();
      await this.events.state(s.userId, { state: 'qr_max_attempts', sessionId: s.sessionId, message: SESSION_MESSAGES.qrMaxAttempts, attempts: s.attempts });
      return;
    }
    s.attempts += 1;
    s.lastQr = qr;
    await this.events.state(s.userId, { state: 'qr', sessionId: s.sessionId, qr, attempts: s.attempts });
  }

  private async onAuthenticated(s: UserSession): Promise<void> {
    if (s.phase !== 'linking') return;
    s.phase = 'authenticating';
    s.lastQr = undefined;
    await this.events.state(s.userId, { state: 'creating', sessionId: s.sessionId, message: SESSION_MESSAGES.creatingFinalizing });
  }

  private async onReady(s: UserSession, phoneNumber: string): Promise<void> {
    if (s.phase === 'ready') return;
    const restored = s.phase === 'restoring';
    restoreFinished(s.userId);
    s.phase = 'ready';
    s.phoneNumber = phoneNumber;
    s.lastQr = undefined;
    if (restored) {
      await this.links.touch(s.userId);
      await this.events.state(s.userId, { state: 'exist', sessionId: s.sessionId, phoneNumber });
      return;
    }
    await this.links.save({ userId: s.userId, sessionId: s.sessionId, engine: this.engine.name, phoneNumber });
    await this.events.state(s.userId, { state: 'ready', sessionId: s.sessionId, phoneNumber });
    // Outside the user's queue: the preference lookup may take its whole timeout. Never to a number
    // WhatsApp did not give us (a LID account whose phone number could not be resolved).
    if (phoneNumber) setImmediate(() => void this.sendWelcome(s.userId, s.sessionId, phoneNumber));
  }

  private async onFailed(s: UserSession, error: Error): Promise<void> {
    this.sessions.delete(s.userId);
    await s.engine?.destroy();
    if (error instanceof PhaseTimeoutError && error.phase === 'qr' && s.phase === 'linking') {
      // Nobody scanned in time (or WhatsApp stopped rotating the QR): the same end as too many QR codes.
      this.logger.log({ userId: s.userId }, 'QR not scanned in time');
      await this.events.state(s.userId, { state: 'qr_max_attempts', sessionId: s.sessionId, message: SESSION_MESSAGES.qrMaxAttempts, attempts: s.attempts });
      return;
    }
    this.logger.error({ err: safeError(error), userId: s.userId, phase: s.phase }, 'WhatsApp engine failed');
    // A restore that failed keeps its stored link: the next start (or createSession) tries again.
    await this.events.state(s.userId, { state: 'disconnected', sessionId: s.sessionId, reason: DISCONNECT_REASONS.engineFailed, message: SESSION_MESSAGES.engineFailed });
  }

  /**
   * The link is gone for good (unlinked on the phone, banned, opened elsewhere, or the login refused):
   * forget it, and tell the user why in plain words.
   */
  private async endLink(s: UserSession, reason: string, detail: { message: string; waReason?: string }): Promise<void> {
    this.logger.log({ userId: s.userId, reason, waReason: detail.waReason }, 'link ended');
    this.sessions.delete(s.userId);
    await s.engine?.destroy();
    await this.links.delete(s.userId);
    await this.engine.deleteStoredAuth(s.userId);
    await this.events.state(s.userId, { state: 'disconnected', sessionId: s.sessionId, reason, message: detail.message, ...(detail.waReason ? { waReason: detail.waReason } : {}) });
  }

  // ---- helpers ---------------------------------------------------------------------------------

  /** The auto-login success message: once per new link, when the user's preference allows it. */
  private async sendWelcome(userId: string, sessionId: string, phoneNumber: string): Promise<void> {
    try {
      const enabled = await this.rpc
        .call('dashboard.preferences.get', { userId }, { timeoutMs: this.env.AUTO_LOGIN_PREF_TIMEOUT_MS })
        .then((p) => p.auto_login_message_enabled !== false)
        .catch(() => true); // SPEC §3: the preference defaults to true
      if (!enabled) return;
      const engine = await this.readyEngine(userId);
      if (!engine || this.sessions.get(userId)?.sessionId !== sessionId) return;
      if (!(await this.links.claimWelcome(userId, sessionId))) return;
      await this.ledger.send(userId, { userId, to: phoneNumber, text: SESSION_MESSAGES.autoLoginSuccess, idempotencyKey: `welcome:${sessionId}` }, engine, 'welcome');
    } catch (err) {
      this.logger.warn({ err: safeError(err), userId }, 'auto-login message not sent');
    }
  }

  private async readyEngine(userId: string): Promise<EngineSession | undefined> {
    const s = this.sessions.get(userId) ?? (await this.serial(userId, () => this.current(userId)));
    return s?.phase === 'ready' ? s.engine : undefined;
  }

  /** This process's entry, or a stored link of this shard that is not running yet (restored now). */
  private async current(userId: string): Promise<UserSession | undefined> {
    const s = this.sessions.get(userId);
    if (s) return s;
    const link = await this.links.find(userId);
    if (!link || link.engine !== this.engine.name) return undefined;
    if (!(await this.engine.hasStoredAuth(userId))) {
      await this.links.delete(userId);
      return undefined;
    }
    const restoring = this.restoringSession(link);
    this.sessions.set(userId, restoring);
    void this.startEngine(restoring);
    return restoring;
  }

  private restoringSession(link: LinkRow): UserSession {
    restoreStarted(link.userId);
    return { userId: link.userId, sessionId: link.sessionId, phase: 'restoring', attempts: 0, phoneNumber: link.phoneNumber };
  }

  private async restoreAll(links: LinkRow[]): Promise<void> {
    const queue = [...links];
    const worker = async () => {
      for (let link = queue.shift(); link && !this.shuttingDown; link = queue.shift()) {
        const userId = link.userId;
        const launch = await this.serial(userId, async () => {
          const s = this.sessions.get(userId);
          if (s?.phase !== 'restoring' || s.engine) return undefined;
          // "No backup before the first save": a link whose login never reached the store cannot come back.
          if (!(await this.engine.hasStoredAuth(userId))) {
            this.sessions.delete(userId);
            await this.links.delete(userId);
            return undefined;
          }
          return { settled: this.startEngine(s) };
        }).catch((err: unknown) => this.logger.error({ err: safeError(err), userId }, 'restore failed'));
        // Outside the user's queue (its events and requests go on), but this worker takes no other
        // link until this browser showed a QR, got ready, failed or missed its start deadline.
        await launch?.settled;
      }
    };
    await Promise.all(Array.from({ length: Math.min(this.env.RESTORE_CONCURRENCY, queue.length) }, worker));
  }

  /** Launches the user's engine; resolves once the launch settled (QR, ready, failure or its deadline). */
  private startEngine(s: UserSession): Promise<void> {
    const listener = this.listenerFor(s);
    s.engine = this.engine.create(
      { userId: s.userId, ...(s.phase === 'restoring' && s.phoneNumber ? { restore: { phoneNumber: s.phoneNumber } } : {}) },
      listener,
    );
    return s.engine.start().catch((err: unknown) => listener.failed(err instanceof Error ? err : new Error(String(err))));
  }

  /** Runs a request in the user's queue, on the shard that owns the user only. */
  private owned<T>(userId: string, fn: () => Promise<T>): Promise<T> {
    try {
      this.assertOwned(userId);
    } catch (err) {
      return Promise.reject(err);
    }
    return this.serial(userId, fn);
  }

  /**
   * Two replicas must never run one account (two browsers on one WhatsApp). A request routed with a
   * stale shard count is refused as unavailable, and the caller retries once the resize is through.
   */
  private assertOwned(userId: unknown): void {
    if (typeof userId !== 'string' || userId === '') throw AppError.validation(SessionsErrorCode.InvalidRequest, 'userId is required');
    if (!this.owns(userId)) throw new AppError(ErrorKind.Unavailable, SessionsErrorCode.WrongShard, SESSION_MESSAGES.wrongShard);
  }

  private owns(userId: string): boolean {
    return shardOf(userId, this.env.SESSIONS_SHARDS) === this.env.SHARD_INDEX;
  }

  private assertSimulated(): void {
    if (this.engine.name !== 'simulated') throw AppError.notFound(SessionsErrorCode.SimulatorDisabled, SESSION_MESSAGES.simulatorDisabled);
  }

  /** Runs `fn` after everything already queued for this user. */
  private serial<T>(userId: string, fn: () => Promise<T>): Promise<T> {
    const prev = this.queues.get(userId) ?? Promise.resolve();
    const run = prev.then(fn, fn);
    const tail = run.catch(() => undefined);
    this.queues.set(userId, tail);
    void tail.then(() => {
      if (this.queues.get(userId) === tail) this.queues.delete(userId);
    });
    return run;
  }
}
