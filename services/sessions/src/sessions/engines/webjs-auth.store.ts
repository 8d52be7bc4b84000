import { createHash, randomUUID } from 'node:crypto';
import { open, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Logger } from '@nestjs/common';
import type { SecretKeyRing } from '@bns/service-kit';
import type { WebjsAuthRepository } from './webjs-auth.repository.js';
import { profileZipProblem } from './webjs-zip.js';

const ZIP_MAGIC = Buffer.from([0x50, 0x4b, 0x03, 0x04]);

/**
 * whatsapp-web.js RemoteAuth store kept in `sessions.webjs_auth`, so any replica that takes a user over
 * restores the login without a scan. It guards against the failures seen with other stores:
 * - the zip is read from RemoteAuth's own dataPath, never the working directory (whatsapp-web.js #3615);
 * - an empty, truncated or oversized zip is refused and the previous good one kept (WAHA #584, #2090):
 *   a backup taken by a browser that had not finished its first save must not overwrite a good login;
 *   so is a valid zip without files under `Default/IndexedDB` and `Default/Local Storage` (a profile
 *   zipped after a logout is 114 bytes with a correct header and nothing in it);
 * - nothing exists before the first good save, so a restart in the first minute after a link does not
 *   restore an empty profile: the user scans again instead;
 * - the zip is sealed at rest (AES-256-GCM under SESSION_STATE_KEY): the database alone never holds a login;
 * - a save replaces the row in one statement and an extract writes a temp file then renames it, so a
 *   crash mid-way never leaves a half-written login behind.
 */
export class WebjsAuthStore {
  private readonly logger = new Logger('WebjsAuthStore');

  constructor(
    private readonly auth: WebjsAuthRepository,
    private readonly userId: string,
    private readonly dataPath: string,
    private readonly maxBytes: number,
    /** Seals the profile zips at rest (SESSION_STATE_KEY). */
    private readonly ring: SecretKeyRing,
  ) {}

  async sessionExists({ session }: { session: string }): Promise<boolean> {
    return this.auth.exists(session);
  }

  async save({ session }: { session: string }): Promise<void> {
    const zipPath = join(this.dataPath, `${session}.zip`);
    const problem = await this.zipProblem(zipPath);
    if (problem) {
      // RemoteAuth calls save from a timer without catching: refusing must not throw.
      this.logger.warn(
        { userId: this.userId, session, problem },
        'refused a RemoteAuth backup; the previous one is kept',
      );
      return;
    }
    const data = await readFile(zipPath);
    await this.auth.save(session, this.userId, this.ring.sealBytes(data));
  }

  async extract({ session, path }: { session: string; path: string }): Promise<void> {
    const sealed = await this.auth.load(session);
    if (!sealed) return;
    // Sealed under the key in force at start (the start-up pass reseals older ones).
    const data = this.ring.openBytes(sealed).plain;
    const tmp = `${path}.${randomUUID()}.tmp`;
    await writeFile(tmp, data);
    await rename(tmp, path).catch(async (err: unknown) => {
      await rm(tmp, { force: true });
      throw err;
    });
  }

  async delete({ session }: { session: string }): Promise<void> {
    await this.auth.delete(session);
  }

  private async zipProblem(zipPath: string): Promise<string | undefined> {
    let handle;
    try {
      handle = await open(zipPath, 'r');
    } catch {
      return 'no backup file';
    }
    try {
      const { size } = await handle.stat();
      if (size < 22) return `backup is empty or truncated (${size} bytes)`;
      if (size > this.maxBytes) return `backup is ${size} bytes, over the ${this.maxBytes} byte limit`;
      const head = Buffer.alloc(4);
      await handle.read(head, 0, 4, 0);
      if (!head.equals(ZIP_MAGIC)) return 'backup is not a zip file';
    } finally {
      await handle.close();
    }
    return profileZipProblem(zipPath);
  }
}

/** RemoteAuth client ids allow only [-_\w]; other user ids are hashed so two users never share one. */
export function webjsClientId(userId: string): string {
  return /^[-_\w]+$/.test(userId) ? userId : `h_${createHash('sha256').update(userId).digest('hex').slice(0, 40)}`;
}

export function webjsSessionName(userId: string): string {
  return `RemoteAuth-${webjsClientId(userId)}`;
}
