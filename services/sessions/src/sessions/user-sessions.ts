import { Inject, Injectable } from '@nestjs/common';
import { ErrorKind, SESSION_MESSAGES, SessionsErrorCode, shardOf } from '@bns/contracts';
import { AppError, SERVICE_ENV } from '@bns/service-kit';
import type { SessionsEnv } from '../config/env.js';
import type { EngineSession } from './engines/engine.types.js';

/**
 * Where one user's link is. No entry at all means no session (every stored link of this shard is
 * restored at start, and looked up again on demand).
 * - linking: the engine shows QR codes, waiting for a scan;
 * - authenticating: scanned, WhatsApp is finishing the link;
 * - restoring: a stored link is being brought back without a scan;
 * - ready: linked, sends go out.
 */
export type Phase = 'linking' | 'authenticating' | 'restoring' | 'ready';

export interface UserSession {
  userId: string;
  sessionId: string;
  phase: Phase;
  engine?: EngineSession;
  attempts: number;
  lastQr?: string;
  phoneNumber?: string;
  /**
   * Linking by phone number (phase linking): the number, how many codes were shown, and the code
   * showing now with its expiry (absent until the engine gave the first one). QR codes are not shown meanwhile.
   */
  pairing?: { phoneNumber: string; codes: number; code?: string; expiresAt?: Date };
}

/**
 * The users this shard holds a link for, each with its queue: every change of a user's state runs in
 * that user's queue, so a second tab, a timer and a browser event never interleave half-way. Also the
 * shard's ownership rule. SessionManager (requests), EngineListeners (engine events) and
 * SimulatorControls (the dev phone) share it.
 */
@Injectable()
export class UserSessions {
  private readonly sessions = new Map<string, UserSession>();
  private readonly queues = new Map<string, Promise<unknown>>();
  /** Set when the process is going down: engine events are ignored from then on. */
  shuttingDown = false;

  constructor(@Inject(SERVICE_ENV) private readonly env: SessionsEnv) {}

  get(userId: string): UserSession | undefined {
    return this.sessions.get(userId);
  }

  set(session: UserSession): void {
    this.sessions.set(session.userId, session);
  }

  delete(userId: string): void {
    this.sessions.delete(userId);
  }

  /** Whether `session` is still the user's entry (not replaced or torn down) and the process is not going down. */
  isCurrent(session: UserSession): boolean {
    return this.sessions.get(session.userId) === session && !this.shuttingDown;
  }

  all(): UserSession[] {
    return [...this.sessions.values()];
  }

  clear(): void {
    this.sessions.clear();
  }

  get size(): number {
    return this.sessions.size;
  }

  /** Runs a request in the user's queue, on the shard that owns the user only. */
  owned<T>(userId: string, fn: () => Promise<T>): Promise<T> {
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
  assertOwned(userId: unknown): void {
    if (typeof userId !== 'string' || userId === '')
      throw AppError.validation(SessionsErrorCode.InvalidRequest, 'userId is required');
    if (!this.owns(userId))
      throw new AppError(ErrorKind.Unavailable, SessionsErrorCode.WrongShard, SESSION_MESSAGES.wrongShard);
  }

  owns(userId: string): boolean {
    return shardOf(userId, this.env.SESSIONS_SHARDS) === this.env.SHARD_INDEX;
  }

  /** Runs `fn` after everything already queued for this user. */
  serial<T>(userId: string, fn: () => Promise<T>): Promise<T> {
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
