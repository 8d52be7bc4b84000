import { randomUUID } from 'node:crypto';
import {
  Inject,
  Injectable,
  Logger,
  Optional,
  type BeforeApplicationShutdown,
  type OnApplicationBootstrap,
} from '@nestjs/common';
import { AppError, SERVICE_ENV } from '@bns/service-kit';
import {
  DISCONNECT_REASONS,
  pairingPhoneNumber,
  SESSION_MESSAGES,
  SessionsErrorCode,
  type PairingCancelReply,
  type PairingCodeReply,
  type CleanupFailure,
  type CleanupStep,
  type SessionLogoutReply,
  type SessionSendReply,
  type SessionSendRequest,
  type SessionStatusReply,
} from '@bns/contracts';
import type { SessionsEnv } from '../config/env.js';
import { safeError } from '../redact.js';
import { WA_ENGINE, type EngineSession, type WaEngine } from './engines/engine.types.js';
import { EngineListeners, type ReadyEngines } from './engine-listeners.js';
import { LinksRepository, type LinkRow } from './links.repository.js';
import { MediaCache } from './media-cache.js';
import { SendLedger } from './send-ledger.service.js';
import { restoreStarted } from '../metrics/sessions.metrics.js';
import { SessionEvents } from './session-events.js';
import { UserSessions, type UserSession } from './user-sessions.js';

/**
 * One state machine per user, on the user's shard: the requests (connect, status, send, logout), the
 * restore of stored links, and the launch of each user's engine. The state lives in UserSessions;
 * what an engine tells is EngineListeners'; the simulated phone's side is SimulatorControls'.
 */
@Injectable()
export class SessionManager implements OnApplicationBootstrap, BeforeApplicationShutdown, ReadyEngines {
  private readonly logger = new Logger('SessionManager');

  constructor(
    @Inject(WA_ENGINE) private readonly engine: WaEngine,
    @Inject(SERVICE_ENV) private readonly env: SessionsEnv,
    private readonly sessions: UserSessions,
    private readonly listeners: EngineListeners,
    private readonly links: LinksRepository,
    private readonly ledger: SendLedger,
    private readonly events: SessionEvents,
    @Optional() private readonly media?: MediaCache,
  ) {}

  // ---- lifecycle -------------------------------------------------------------------------------

  /** Restores every stored link this shard owns, a few at a time (each webjs restore is a browser). */
  async onApplicationBootstrap(): Promise<void> {
    const owned = (await this.links.all(this.engine.name)).filter((l) => this.sessions.owns(l.userId));
    for (const link of owned) this.sessions.set(this.restoringSession(link));
    this.logger.log(
      `restoring ${owned.length} stored link(s) on shard ${this.env.SHARD_INDEX}/${this.env.SESSIONS_SHARDS}`,
    );
    void this.restoreAll(owned);
  }

  async beforeApplicationShutdown(): Promise<void> {
    this.sessions.shuttingDown = true;
    // Stop the engines but keep every stored login: the next replica of this shard restores them.
    await Promise.allSettled(this.sessions.all().map((s) => s.engine?.destroy()));
    this.sessions.clear();
  }

  /** Linked users held by this process (the memory benchmark reads it through sessions.status). */
  get size(): number {
    return this.sessions.size;
  }

  // ---- requests --------------------------------------------------------------------------------

  /** createSession: announce the state to the user's room; explicit requests start or join a link. */
  connect(userId: string, explicit: boolean): Promise<SessionStatusReply> {
    return this.sessions.owned(userId, async () => {
      const s = await this.current(userId);
      if (s?.phase === 'ready') {
        await this.events.state(userId, { state: 'exist', sessionId: s.sessionId, phoneNumber: s.phoneNumber });
        return { state: 'exist', sessionId: s.sessionId, phoneNumber: s.phoneNumber };
      }
      if (s?.phase === 'restoring' || s?.phase === 'authenticating') {
        const message =
          s.phase === 'restoring' ? SESSION_MESSAGES.creatingRestoring : SESSION_MESSAGES.creatingFinalizing;
        await this.events.state(userId, { state: 'creating', sessionId: s.sessionId, message });
        return { state: 'creating', sessionId: s.sessionId };
      }
      if (s?.phase === 'linking') {
        // A second tab joins the link in progress: same engine, the QR currently showing.
        if (!explicit)
          await this.events.state(userId, {
            state: 'creating',
            sessionId: s.sessionId,
            message: SESSION_MESSAGES.creatingInProgress,
          });
        if (s.pairing) {
          if (s.pairing.code && s.pairing.expiresAt)
            await this.events.state(userId, {
              state: 'pairing_code',
              sessionId: s.sessionId,
              code: s.pairing.code,
              expiresAt: s.pairing.expiresAt.toISOString(),
            });
          return { state: s.pairing.code ? 'pairing_code' : 'creating', sessionId: s.sessionId };
        }
        if (s.lastQr)
          await this.events.state(userId, { state: 'qr', sessionId: s.sessionId, qr: s.lastQr, attempts: s.attempts });
        return { state: s.lastQr ? 'qr' : 'creating', sessionId: s.sessionId };
      }
      if (!explicit) {
        await this.events.state(userId, { state: 'no_session' });
        return { state: 'no_session' };
      }
      const session: UserSession = { userId, sessionId: randomUUID(), phase: 'linking', attempts: 0 };
      this.sessions.set(session);
      // Not awaited: the browser may take longer to show a QR than the caller waits for this answer.
      void this.startEngine(session);
      return { state: 'creating', sessionId: session.sessionId };
    });
  }

  status(userId: string): Promise<SessionStatusReply> {
    return this.sessions.owned(userId, async () => {
      const s = await this.current(userId);
      if (!s) return { state: 'no_session' };
      if (s.phase === 'ready') return { state: 'exist', sessionId: s.sessionId, phoneNumber: s.phoneNumber };
      if (s.phase === 'linking' && s.pairing?.code) return { state: 'pairing_code', sessionId: s.sessionId };
      if (s.phase === 'linking' && !s.pairing && s.lastQr) return { state: 'qr', sessionId: s.sessionId };
      return { state: 'creating', sessionId: s.sessionId };
    });
  }

  /**
   * Link by phone number: turns the link waiting for a scan into one waiting for a code, or starts a
   * link (no createSession needed). The codes go out as the `pairing_code` state.
   */
  requestPairingCode(userId: string, phoneNumber: string): Promise<PairingCodeReply> {
    const number = pairingPhoneNumber(phoneNumber);
    if (!number)
      return Promise.reject(
        AppError.validation(SessionsErrorCode.PairingPhoneInvalid, SESSION_MESSAGES.pairingPhoneInvalid, {
          phoneNumber: SESSION_MESSAGES.pairingPhoneInvalid,
        }),
      );
    return this.sessions.owned(userId, async () => {
      const s = await this.current(userId);
      if (s && (s.phase !== 'linking' || !s.engine))
        throw AppError.conflict(SessionsErrorCode.PairingAlreadyLinked, SESSION_MESSAGES.pairingAlreadyLinked);
      if (s) {
        // A number asked again (another number, or the same after a typo) starts the count afresh.
        s.pairing = { phoneNumber: number, codes: 0 };
        s.lastQr = undefined;
        await s.engine!.requestPairingCode(number);
        return { sessionId: s.sessionId };
      }
      const session: UserSession = {
        userId,
        sessionId: randomUUID(),
        phase: 'linking',
        attempts: 0,
        pairing: { phoneNumber: number, codes: 0 },
      };
      this.sessions.set(session);
      void this.startEngine(session);
      return { sessionId: session.sessionId };
    });
  }

  /** Back to the QR code from linking by phone number; false when no code was being shown. */
  cancelPairingCode(userId: string): Promise<PairingCancelReply> {
    return this.sessions.owned(userId, async () => {
      const s = this.sessions.get(userId);
      if (s?.phase !== 'linking' || !s.pairing || !s.engine) return { cancelled: false };
      s.pairing = undefined;
      // The QR starts over: a fresh set of attempts.
      s.attempts = 0;
      await s.engine.cancelPairingCode();
      return { cancelled: true };
    });
  }

  private mediaCache(): MediaCache {
    if (!this.media) throw AppError.unavailable();
    return this.media;
  }

  async send(req: SessionSendRequest): Promise<SessionSendReply> {
    this.ledger.validate(req);
    this.sessions.assertOwned(req.userId);
    const engine = await this.readyEngine(req.userId);
    // The attachment's bytes come from this shard's cache: fetched once for all of a job's recipients.
    const media = req.media && engine ? await this.mediaCache().load(req.media) : undefined;
    return this.ledger.send(req.userId, req, engine, 'job', media);
  }

  /**
   * Sign-out cleanup: unlink, drop the stored link and login; 0 when there was nothing. Every step runs
   * even when an earlier one failed, and a failed step is reported (not swallowed), so the caller can
   * tell a partial cleanup from a full one.
   */
  logout(userId: string): Promise<SessionLogoutReply> {
    return this.sessions.owned(userId, async () => {
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
      const deletedLinks =
        (await attempt('stored_link', SESSION_MESSAGES.cleanupStoredLinkFailed, () => this.links.delete(userId))) ?? 0;
      await attempt('stored_login', SESSION_MESSAGES.cleanupStoredLoginFailed, () =>
        this.engine.deleteStoredAuth(userId),
      );
      const found = s !== undefined || deletedLinks > 0;
      if (found)
        await this.events.state(userId, {
          state: 'disconnected',
          sessionId: s?.sessionId,
          reason: DISCONNECT_REASONS.logout,
        });
      return {
        sessionsCleanedUp: found && failures.length === 0 ? 1 : 0,
        ...(failures.length > 0 ? { failures } : {}),
      };
    });
  }

  // ---- engines ---------------------------------------------------------------------------------

  /** The user's engine when their link is ready (a stored link not running yet starts restoring). */
  async readyEngine(userId: string): Promise<EngineSession | undefined> {
    const s = this.sessions.get(userId) ?? (await this.sessions.serial(userId, () => this.current(userId)));
    return s?.phase === 'ready' ? s.engine : undefined;
  }

  /** This process's entry, or a stored link of this shard that is not running yet (restored now). Call it in the user's queue. */
  async current(userId: string): Promise<UserSession | undefined> {
    const s = this.sessions.get(userId);
    if (s) return s;
    const link = await this.links.find(userId);
    if (!link || link.engine !== this.engine.name) return undefined;
    if (!(await this.engine.hasStoredAuth(userId))) {
      await this.links.delete(userId);
      return undefined;
    }
    const restoring = this.restoringSession(link);
    this.sessions.set(restoring);
    void this.startEngine(restoring);
    return restoring;
  }

  private restoringSession(link: LinkRow): UserSession {
    restoreStarted(link.userId);
    return {
      userId: link.userId,
      sessionId: link.sessionId,
      phase: 'restoring',
      attempts: 0,
      phoneNumber: link.phoneNumber,
    };
  }

  private async restoreAll(links: LinkRow[]): Promise<void> {
    const queue = [...links];
    const worker = async () => {
      for (let link = queue.shift(); link && !this.sessions.shuttingDown; link = queue.shift()) {
        const userId = link.userId;
        const launch = await this.sessions
          .serial(userId, async () => {
            const s = this.sessions.get(userId);
            if (s?.phase !== 'restoring' || s.engine) return undefined;
            // "No backup before the first save": a link whose login never reached the store cannot come back.
            if (!(await this.engine.hasStoredAuth(userId))) {
              this.sessions.delete(userId);
              await this.links.delete(userId);
              return undefined;
            }
            return { settled: this.startEngine(s) };
          })
          .catch((err: unknown) => this.logger.error({ err: safeError(err), userId }, 'restore failed'));
        // Outside the user's queue (its events and requests go on), but this worker takes no other
        // link until this browser showed a QR, got ready, failed or missed its start deadline.
        await launch?.settled;
      }
    };
    await Promise.all(Array.from({ length: Math.min(this.env.RESTORE_CONCURRENCY, queue.length) }, worker));
  }

  /** Launches the user's engine; resolves once the launch settled (QR, ready, failure or its deadline). */
  private startEngine(s: UserSession): Promise<void> {
    const listener = this.listeners.listenerFor(s, this);
    s.engine = this.engine.create(
      {
        userId: s.userId,
        ...(s.phase === 'restoring' && s.phoneNumber ? { restore: { phoneNumber: s.phoneNumber } } : {}),
        ...(s.phase === 'linking' && s.pairing ? { pairWithPhoneNumber: s.pairing.phoneNumber } : {}),
      },
      listener,
    );
    return s.engine
      .start()
      .catch((err: unknown) => listener.failed(err instanceof Error ? err : new Error(String(err))));
  }
}
