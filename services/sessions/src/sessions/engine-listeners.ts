import { Inject, Injectable, Logger } from '@nestjs/common';
import { DISCONNECT_REASONS, LIMITS, SESSION_MESSAGES, whatsappDisconnect } from '@bns/contracts';
import { RpcClient, SERVICE_ENV } from '@bns/service-kit';
import type { SessionsEnv } from '../config/env.js';
import { restoreFinished } from '../metrics/sessions.metrics.js';
import { safeError } from '../redact.js';
import {
  PhaseTimeoutError,
  WA_ENGINE,
  type AckStatus,
  type EngineListener,
  type EngineSession,
  type WaEngine,
} from './engines/engine.types.js';
import { LinksRepository } from './links.repository.js';
import { MessageEvents } from './message-events.service.js';
import { SendLedger } from './send-ledger.service.js';
import { SessionEvents } from './session-events.js';
import { UserSessions, type UserSession } from './user-sessions.js';

/** What a listener needs of SessionManager: the engine of a linked user (a stored link is restored on demand). */
export interface ReadyEngines {
  readyEngine(userId: string): Promise<EngineSession | undefined>;
}

/**
 * What a user's engine tells (QR codes, scan, ready, disconnects, failures, receipts, inbound
 * messages), turned into the user's state and events. Each state change runs in the user's queue;
 * events of an engine that was replaced or torn down are ignored.
 */
@Injectable()
export class EngineListeners {
  // Logged under the manager's name, as they were before the listener had its own file.
  private readonly logger = new Logger('SessionManager');

  constructor(
    @Inject(WA_ENGINE) private readonly engine: WaEngine,
    @Inject(SERVICE_ENV) private readonly env: SessionsEnv,
    private readonly sessions: UserSessions,
    private readonly links: LinksRepository,
    private readonly ledger: SendLedger,
    private readonly events: SessionEvents,
    private readonly rpc: RpcClient,
    private readonly messageEvents: MessageEvents,
  ) {}

  /** The listener of `session`'s engine. */
  listenerFor(session: UserSession, engines: ReadyEngines): EngineListener {
    const on = (what: string, fn: (s: UserSession) => Promise<void>) =>
      void this.sessions
        .serial(session.userId, async () => {
          if (!this.sessions.isCurrent(session)) return;
          await fn(session);
        })
        .catch((err: unknown) =>
          this.logger.error({ err: safeError(err), userId: session.userId, what }, 'engine event failed'),
        );
    return {
      qr: (qr) => on('qr', (s) => this.onQr(s, qr)),
      pairingCode: (code, expiresAt) => on('pairing_code', (s) => this.onPairingCode(s, code, expiresAt)),
      authenticated: () => on('authenticated', (s) => this.onAuthenticated(s)),
      ready: (phone) => on('ready', (s) => this.onReady(s, phone, engines)),
      disconnected: (waReason) =>
        on('disconnected', (s) => {
          const { reason, message } = whatsappDisconnect(waReason);
          return this.endLink(s, reason, { message, waReason });
        }),
      authFailure: () =>
        on('auth_failure', (s) => this.endLink(s, DISCONNECT_REASONS.authLost, { message: SESSION_MESSAGES.authLost })),
      failed: (error) => on('failed', (s) => this.onFailed(s, error)),
      // Receipts and inbound messages do not touch the link's state: they go straight to the durable
      // outbox (retried through a Postgres outage), outside the user's queue.
      ack: (messageId, status: AckStatus, reason?: string, lid?: string) =>
        void this.messageEvents.recordAck(session.userId, messageId, status, reason, lid),
      incoming: (message) =>
        void this.messageEvents.recordInbound(session.userId, {
          ...(message.phone ? { from: message.phone } : {}),
          ...(message.lid ? { lid: message.lid } : {}),
          text: message.text,
          at: message.at,
          messageId: message.messageId,
          ...(message.quotedMessageId ? { quotedMessageId: message.quotedMessageId } : {}),
        }),
      contact: (lid, phone) => void this.messageEvents.learnContact(session.userId, lid, phone),
    };
  }

  private async onQr(s: UserSession, qr: string): Promise<void> {
    if (s.phase === 'restoring') {
      // WhatsApp asks for a scan: the stored login is no longer valid.
      await this.endLink(s, DISCONNECT_REASONS.authLost, { message: SESSION_MESSAGES.authLost });
      return;
    }
    // Linking by phone number: the page's QR is not shown (nor counted) meanwhile.
    if (s.phase !== 'linking' || s.pairing) return;
    if (s.attempts >= LIMITS.qrMaxAttempts) {
      await this.tooManyCodes(s, SESSION_MESSAGES.qrMaxAttempts, s.attempts);
      return;
    }
    s.attempts += 1;
    s.lastQr = qr;
    await this.events.state(s.userId, { state: 'qr', sessionId: s.sessionId, qr, attempts: s.attempts });
  }

  /** Linking by phone number: each new code goes to the user's tabs, up to LIMITS.pairingCodeMaxCodes. */
  private async onPairingCode(s: UserSession, code: string, expiresAt: Date): Promise<void> {
    if (s.phase !== 'linking' || !s.pairing) return;
    if (s.pairing.codes >= LIMITS.pairingCodeMaxCodes) {
      await this.tooManyCodes(s, SESSION_MESSAGES.pairingCodeMaxCodes, s.pairing.codes);
      return;
    }
    s.pairing.codes += 1;
    s.pairing.code = code;
    s.pairing.expiresAt = expiresAt;
    await this.events.state(s.userId, {
      state: 'pairing_code',
      sessionId: s.sessionId,
      code,
      expiresAt: expiresAt.toISOString(),
    });
  }

  /** Nobody scanned or entered a code in time: the link is torn down, as SPEC §4 says for the QR. */
  private async tooManyCodes(s: UserSession, message: string, attempts: number): Promise<void> {
    this.sessions.delete(s.userId);
    await s.engine?.destroy();
    await this.events.state(s.userId, { state: 'qr_max_attempts', sessionId: s.sessionId, message, attempts });
  }

  private async onAuthenticated(s: UserSession): Promise<void> {
    if (s.phase !== 'linking') return;
    s.phase = 'authenticating';
    s.lastQr = undefined;
    s.pairing = undefined;
    await this.events.state(s.userId, {
      state: 'creating',
      sessionId: s.sessionId,
      message: SESSION_MESSAGES.creatingFinalizing,
    });
  }

  private async onReady(s: UserSession, phoneNumber: string, engines: ReadyEngines): Promise<void> {
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
    await this.events.audit(s.userId, 'whatsapp.linked', s.sessionId);
    // Outside the user's queue: the preference lookup may take its whole timeout. Never to a number
    // WhatsApp did not give us (a LID account whose phone number could not be resolved).
    if (phoneNumber) setImmediate(() => void this.sendWelcome(s.userId, s.sessionId, phoneNumber, engines));
  }

  private async onFailed(s: UserSession, error: Error): Promise<void> {
    this.sessions.delete(s.userId);
    await s.engine?.destroy();
    if (error instanceof PhaseTimeoutError && error.phase === 'qr' && s.phase === 'linking') {
      // Nobody scanned in time (or WhatsApp stopped rotating the QR): the same end as too many QR codes.
      this.logger.log({ userId: s.userId }, 'QR not scanned in time');
      await this.events.state(s.userId, {
        state: 'qr_max_attempts',
        sessionId: s.sessionId,
        message: SESSION_MESSAGES.qrMaxAttempts,
        attempts: s.attempts,
      });
      return;
    }
    this.logger.error({ err: safeError(error), userId: s.userId, phase: s.phase }, 'WhatsApp engine failed');
    // A restore that failed keeps its stored link: the next start (or createSession) tries again.
    await this.events.state(s.userId, {
      state: 'disconnected',
      sessionId: s.sessionId,
      reason: DISCONNECT_REASONS.engineFailed,
      message: SESSION_MESSAGES.engineFailed,
    });
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
    await this.events.state(s.userId, {
      state: 'disconnected',
      sessionId: s.sessionId,
      reason,
      message: detail.message,
      ...(detail.waReason ? { waReason: detail.waReason } : {}),
    });
    await this.events.audit(s.userId, 'whatsapp.unlinked', s.sessionId);
  }

  /** The auto-login success message: once per new link, when the user's preference allows it. */
  private async sendWelcome(
    userId: string,
    sessionId: string,
    phoneNumber: string,
    engines: ReadyEngines,
  ): Promise<void> {
    try {
      const enabled = await this.rpc
        .call('dashboard.preferences.get', { userId }, { timeoutMs: this.env.AUTO_LOGIN_PREF_TIMEOUT_MS })
        .then((p) => p.auto_login_message_enabled !== false)
        .catch(() => true); // SPEC §3: the preference defaults to true
      if (!enabled) return;
      const engine = await engines.readyEngine(userId);
      if (!engine || this.sessions.get(userId)?.sessionId !== sessionId) return;
      if (!(await this.links.claimWelcome(userId, sessionId))) return;
      await this.ledger.send(
        userId,
        { userId, to: phoneNumber, text: SESSION_MESSAGES.autoLoginSuccess, idempotencyKey: `welcome:${sessionId}` },
        engine,
        'welcome',
      );
    } catch (err) {
      this.logger.warn({ err: safeError(err), userId }, 'auto-login message not sent');
    }
  }
}
