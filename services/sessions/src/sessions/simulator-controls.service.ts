import { Inject, Injectable } from '@nestjs/common';
import {
  LIMITS,
  SESSION_MESSAGES,
  SessionsErrorCode,
  normalizeLid,
  normalizePhone,
  type SimulatorInboundReply,
  type SimulatorInboundRequest,
  type SimulatorOutboxReply,
  type SimulatorScanReply,
} from '@bns/contracts';
import { AppError } from '@bns/service-kit';
import { isSimulatorControls, WA_ENGINE, type WaEngine } from './engines/engine.types.js';
import { SimOutboxRepository } from './engines/sim-outbox.repository.js';
import { simulatedLid } from './engines/simulated.engine.js';
import { SessionManager } from './session-manager.service.js';
import { UserSessions } from './user-sessions.js';

/**
 * Dev only: the phone's side of the simulated engine (scan the QR, unlink, receive a message, what
 * arrived). With any other engine every call answers "not found".
 */
@Injectable()
export class SimulatorControls {
  constructor(
    @Inject(WA_ENGINE) private readonly engine: WaEngine,
    private readonly sessions: UserSessions,
    private readonly manager: SessionManager,
    private readonly simOutbox: SimOutboxRepository,
  ) {}

  scan(userId: string): Promise<SimulatorScanReply> {
    this.assertSimulated();
    return this.sessions.owned(userId, async () => {
      const s = this.sessions.get(userId);
      if (s?.phase !== 'linking' || !s.engine || !isSimulatorControls(s.engine)) {
        throw AppError.conflict(SessionsErrorCode.NoPendingLink, SESSION_MESSAGES.noPendingLink);
      }
      return { sessionId: s.sessionId, phoneNumber: s.engine.scan() };
    });
  }

  /** The simulated phone enters the pairing code showing: links the number the code was asked for. */
  pair(userId: string, code: string): Promise<SimulatorScanReply> {
    this.assertSimulated();
    return this.sessions.owned(userId, async () => {
      const s = this.sessions.get(userId);
      if (s?.phase !== 'linking' || !s.pairing || !s.engine || !isSimulatorControls(s.engine)) {
        throw AppError.conflict(SessionsErrorCode.NoPendingPairingCode, SESSION_MESSAGES.noPendingPairingCode);
      }
      return { sessionId: s.sessionId, phoneNumber: s.engine.enterPairingCode(code) };
    });
  }

  disconnect(userId: string): Promise<{ disconnected: true }> {
    this.assertSimulated();
    return this.sessions.owned(userId, async () => {
      const s = await this.manager.current(userId);
      if (!s?.engine || !isSimulatorControls(s.engine) || s.phase !== 'ready') {
        throw AppError.conflict(SessionsErrorCode.NothingToDisconnect, SESSION_MESSAGES.nothingToDisconnect);
      }
      s.engine.phoneUnlink();
      return { disconnected: true };
    });
  }

  /**
   * The simulated phone receives a message from `from`, or from `lid` alone (no number): it reaches the
   * user as `events.message.received`, with the number the sessions service finds for a LID.
   */
  inbound(req: SimulatorInboundRequest): Promise<SimulatorInboundReply> {
    this.assertSimulated();
    const errors: Record<string, string> = {};
    const from = req?.from === undefined ? undefined : (normalizePhone(req.from, 'international') ?? '');
    const lid = req?.lid === undefined ? undefined : normalizeLid(req.lid);
    if (from === undefined && req?.lid === undefined) errors.from = 'from (8 to 15 digits) or lid is required';
    else if (from !== undefined && (typeof req.from !== 'string' || !/^\d{8,15}$/.test(from)))
      errors.from = 'from must be 8 to 15 digits';
    if (req?.lid !== undefined && !lid) errors.lid = 'lid must be digits followed by @lid (e.g. 123456789012345@lid)';
    if (
      req?.quotedMessageId !== undefined &&
      (typeof req.quotedMessageId !== 'string' || req.quotedMessageId.length > 200)
    )
      errors.quotedMessageId = 'quotedMessageId must be a message id';
    if (typeof req?.text !== 'string' || req.text.trim() === '') errors.text = 'text is required';
    else if (req.text.length > LIMITS.messageMaxLength)
      errors.text = `text must be ${LIMITS.messageMaxLength} characters or less`;
    else if (req.text.includes('\u0000')) errors.text = 'text must not contain NUL characters';
    if (Object.keys(errors).length > 0)
      return Promise.reject(
        AppError.validation(SessionsErrorCode.InvalidRequest, Object.values(errors).join('; '), errors),
      );
    return this.sessions.owned(req.userId, async () => {
      const s = await this.manager.current(req.userId);
      if (s?.phase !== 'ready' || !s.engine || !isSimulatorControls(s.engine))
        throw AppError.conflict(SessionsErrorCode.NotLinked, SESSION_MESSAGES.notLinked);
      const { messageId, at } = s.engine.receive({
        ...(from ? { phone: from } : {}),
        ...(lid ? { lid } : {}),
        text: req.text,
        ...(req.quotedMessageId ? { quotedMessageId: req.quotedMessageId } : {}),
      });
      return { messageId, at: at.toISOString() };
    });
  }

  async outbox(userId: string): Promise<SimulatorOutboxReply> {
    this.assertSimulated();
    const rows = await this.simOutbox.list(userId);
    return {
      messages: rows.map((r) => ({
        to: r.toNumber,
        lid: simulatedLid(normalizePhone(r.toNumber, 'international') ?? r.toNumber),
        text: r.text,
        idempotencyKey: r.idempotencyKey,
        at: new Date(r.sentAt).toISOString(),
        ...(r.media ? { media: r.media } : {}),
      })),
    };
  }

  private assertSimulated(): void {
    if (this.engine.name !== 'simulated')
      throw AppError.notFound(SessionsErrorCode.SimulatorDisabled, SESSION_MESSAGES.simulatorDisabled);
  }
}
