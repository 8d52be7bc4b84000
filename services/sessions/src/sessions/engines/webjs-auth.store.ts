import { createHash, randomUUID } from 'node:crypto';
import { open, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Logger } from '@nestjs/common';
import { DataSource } from 'typeorm';

const ZIP_MAGIC = Buffer.from([0x50, 0x4b, 0x03, 0x04]);

/**
 * whatsapp-web.js RemoteAuth store kept in `sessions.webjs_auth`, so any replica that takes a user over
 * restores the login without a scan. It guards against the failures seen with other stores:
 * - the zip is read from RemoteAuth's own dataPath, never the working directory (whatsapp-web.js #3615);
 * - an empty, truncated or oversized zip is refused and the previous good one kept (WAHA #584, #2090):
 *   a backup taken by a browser that had not finished its first save must not overwrite a good login;
 * - nothing exists before the first good save, so a restart in the first minute after a link does not
 *   restore an empty profile: the user scans again instead;
 * - a save replaces the row in one statement and an extract writes a temp file then renames it, so a
 *   crash mid-way never leaves a half-written login behind.
 */
export class WebjsAuthStore {
  private readonly logger = new Logger('WebjsAuthStore');

  constructor(
    private readonly db: DataSource,
    private readonly userId: string,
    private readonly dataPath: string,
    private readonly maxBytes: number,
  ) {}

  async sessionExists({ session }: { session: string }): Promise<boolean> {
    const rows: unknown[] = await this.db.query(`SELECT 1 FROM webjs_auth WHERE session = $1`, [session]);
    return rows.length > 0;
  }

  async save({ session }: { session: string }): Promise<void> {
    const zipPath = join(this.dataPath, `${session}.zip`);
    const problem = await this.zipProblem(zipPath);
    if (problem) {
      // RemoteAuth calls save from a timer without catching: refusing must not throw.
      this.logger.warn({ userId: this.userId, session, problem }, 'refused a RemoteAuth backup; the previous one is kept');
      return;
    }
    const data = await readFile(zipPath);
    await this.db.query(
      `INSERT INTO webjs_auth (session, user_id, data, size_bytes, saved_at) VALUES ($1, $2, $3, $4, now())
       ON CONFLICT (session) DO UPDATE SET data = excluded.data, size_bytes = excluded.size_bytes, saved_at = now(), user_id = excluded.user_id`,
      [session, this.userId, data, data.length],
    );
  }

  async extract({ session, path }: { session: string; path: string }): Promise<void> {
    const rows: { data: Buffer }[] = await this.db.query(`SELECT data FROM webjs_auth WHERE session = $1`, [session]);
    if (rows.length === 0) return;
    const tmp = `${path}.${randomUUID()}.tmp`;
    await writeFile(tmp, rows[0]!.data);
    await rename(tmp, path).catch(async (err: unknown) => {
      await rm(tmp, { force: true });
      throw err;
    });
  }

  async delete({ session }: { session: string }): Promise<void> {
    await this.db.query(`DELETE FROM webjs_auth WHERE session = $1`, [session]);
  }

  private async zipProblem(zipPath: string): Promise<string | undefined> {
    let handle;
    try {
      handle = await open(zipPath, 'r');
    } catch {
      return `no backup file at ${zipPath}`;
    }
    try {
      const { size } = await handle.stat();
      if (size < 22) return `backup is empty or truncated (${size} bytes)`;
      if (size > this.maxBytes) return `backup is ${size} bytes, over the ${this.maxBytes} byte limit`;
      const head = Buffer.alloc(4);
      await handle.read(head, 0, 4, 0);
      if (!head.equals(ZIP_MAGIC)) return 'backup is not a zip file';
      return undefined;
    } finally {
      await handle.close();
    }
  }
}

/** RemoteAuth client ids allow only [-_\w]; other user ids are hashed so two users never share one. */
export function webjsClientId(userId: string): string {
  return /^[-_\w]+$/.test(userId) ? userId : `h_${createHash('sha256').update(userId).digest('hex').slice(0, 40)}`;
}

export function webjsSessionName(userId: string): string {
  return `RemoteAuth-${webjsClientId(userId)}`;
}
