import { unlink } from 'node:fs/promises';
import { Logger } from '@nestjs/common';
import wwebjs from 'whatsapp-web.js';
import { safeError } from '../../redact.js';
import { unzipper } from './webjs-zip.js';

/** RemoteAuth's own wait before the first backup of a new link (the profile must settle first). */
const FIRST_BACKUP_DELAY_MS = 60_000;

/** RemoteAuth as it is in 1.34.7's JavaScript (its typings declare these as properties, or not at all). */
interface RemoteAuthMethods {
  afterAuthReady(): Promise<void>;
  storeRemoteSession(options?: { emit?: boolean }): Promise<void>;
  logout(): Promise<void>;
  disconnect(): Promise<void>;
  destroy(): Promise<void>;
  beforeBrowserInitialized(): Promise<void>;
  unCompressSession(compressedSessionPath: string): Promise<void>;
}
interface RemoteAuthInternals {
  userDataDir: string;
  sessionName: string;
  backupSyncIntervalMs: number;
  store: { sessionExists(o: { session: string }): Promise<boolean> };
}
export type RemoteAuthOptions = ConstructorParameters<typeof wwebjs.RemoteAuth>[0];
const RemoteAuthBase = wwebjs.RemoteAuth as unknown as new (options: RemoteAuthOptions) => RemoteAuthMethods;

/**
 * whatsapp-web.js 1.34.7's RemoteAuth, made safe to run many of in one process:
 * - the library calls `afterAuthReady` and the backup timer's `storeRemoteSession` without awaiting
 *   them, and `logout`/`disconnect` from a page event handler: a rejection there (Postgres down, the
 *   profile folder gone) would be unhandled and end the process, so every such entry point catches;
 * - `ready` fires again on every page re-injection and each call started another backup interval, of
 *   which `destroy()` cleared only the last, and the 60 s first backup survived `destroy()`: a leaked
 *   timer could re-insert a backup just deleted by logout. Here one set of timers exists per client,
 *   and `destroy`, `logout` and `disconnect` clear them all and stop further backups;
 * - its unzip resolves on unzipper's Extract 'finish', which fires before the files are written:
 *   Chromium then starts on a half-restored profile and the login is lost. Here extraction resolves
 *   only once every file is closed on disk.
 */
export class SafeRemoteAuth extends RemoteAuthBase {
  private readonly log = new Logger('SafeRemoteAuth');
  private firstBackup?: NodeJS.Timeout;
  private backupTimer?: NodeJS.Timeout;
  private stopped = false;
  private generation = 0;

  private get self(): RemoteAuthInternals {
    return this as unknown as RemoteAuthInternals;
  }

  /** What the Client's `authStrategy` option takes. */
  asStrategy(): InstanceType<typeof wwebjs.RemoteAuth> {
    return this as unknown as InstanceType<typeof wwebjs.RemoteAuth>;
  }

  override async afterAuthReady(): Promise<void> {
    // Two readies close together both get here; only the latest may arm timers (after its await).
    const generation = ++this.generation;
    try {
      this.clearTimers();
      if (this.stopped) return;
      const exists = await this.self.store.sessionExists({ session: this.self.sessionName });
      if (this.stopped || generation !== this.generation) return;
      this.clearTimers();
      if (!exists) this.firstBackup = setTimeout(() => void this.backup(true), FIRST_BACKUP_DELAY_MS);
      this.backupTimer = setInterval(() => void this.backup(false), this.self.backupSyncIntervalMs);
    } catch (err) {
      this.log.warn(
        { err: safeError(err) },
        'RemoteAuth could not schedule backups; the login is not backed up until the next ready',
      );
    }
  }

  override async storeRemoteSession(options?: { emit?: boolean }): Promise<void> {
    if (this.stopped) return;
    try {
      await super.storeRemoteSession(options);
    } catch (err) {
      this.log.warn(
        { err: safeError(err) },
        'RemoteAuth backup failed; the previous backup is kept and the next one retries',
      );
    }
  }

  override async logout(): Promise<void> {
    this.stop();
    try {
      await super.logout();
    } catch (err) {
      this.log.warn({ err: safeError(err) }, 'RemoteAuth logout failed');
    }
  }

  override async disconnect(): Promise<void> {
    this.stop();
    try {
      await super.disconnect();
    } catch (err) {
      this.log.warn({ err: safeError(err) }, 'RemoteAuth disconnect failed');
    }
  }

  override async destroy(): Promise<void> {
    this.stop();
    await super.destroy().catch(() => undefined);
  }

  /** Starting the browser again (the library's re-initialisation after a phone-side logout) re-arms backups. */
  override async beforeBrowserInitialized(): Promise<void> {
    this.stopped = false;
    await super.beforeBrowserInitialized();
  }

  override async unCompressSession(compressedSessionPath: string): Promise<void> {
    const zip = await unzipper.Open.file(compressedSessionPath);
    await zip.extract({ path: this.self.userDataDir, concurrency: 5 });
    await unlink(compressedSessionPath);
  }

  private async backup(emit: boolean): Promise<void> {
    if (emit) this.firstBackup = undefined;
    await this.storeRemoteSession(emit ? { emit: true } : undefined);
  }

  private stop(): void {
    this.stopped = true;
    this.clearTimers();
  }

  private clearTimers(): void {
    clearTimeout(this.firstBackup);
    clearInterval(this.backupTimer);
    this.firstBackup = undefined;
    this.backupTimer = undefined;
  }
}
