import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import type { MediaKind, MediaRef, MediaView } from '@bns/contracts';
import { row, rows } from '@bns/service-kit';

export interface MediaRow {
  id: string;
  userId: string;
  sha256: string;
  object: string;
  kind: MediaKind;
  mime: string;
  size: number;
  fileName: string;
  createdAt: Date;
}

const COLUMNS = `id, user_id AS "userId", sha256, object, kind, mime, size::float8 AS size, file_name AS "fileName", created_at AS "createdAt"`;
/** Jobs that still have sending to do: their attachment must stay. */
const ACTIVE = `('queued', 'scheduled', 'running', 'paused')`;

export const mediaView = (m: MediaRow): MediaView => ({
  mediaId: m.id,
  kind: m.kind,
  size: m.size,
  sha256: m.sha256,
  fileName: m.fileName,
  mime: m.mime,
  createdAt: new Date(m.createdAt).toISOString(),
});
export const mediaRef = (m: MediaRow): MediaRef => ({
  mediaId: m.id,
  object: m.object,
  kind: m.kind,
  mime: m.mime,
  sha256: m.sha256,
  size: m.size,
  fileName: m.fileName,
});

/** Every statement of attachments (`jobs.media`, `jobs.media_holds`, a job's reference). */
@Injectable()
export class MediaRepository {
  /**
   * Stores a new attachment, or answers the one the user already has with the same bytes (`created`
   * false), marking it used now either way.
   */
  async register(
    em: EntityManager,
    m: Omit<MediaRow, 'createdAt'>,
    now: Date,
  ): Promise<{ media: MediaRow; created: boolean }> {
    const found = await row<MediaRow & { created: boolean }>(
      em,
      `INSERT INTO media (id, user_id, sha256, object, kind, mime, size, file_name, created_at, last_used_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $9)
       ON CONFLICT (user_id, sha256) DO UPDATE SET last_used_at = greatest(media.last_used_at, EXCLUDED.last_used_at)
       RETURNING ${COLUMNS}, (xmax = 0) AS created`,
      [m.id, m.userId, m.sha256, m.object, m.kind, m.mime, m.size, m.fileName, now],
    );
    const { created, ...media } = found!;
    return { media, created };
  }

  /** One of the user's attachments; another user's id finds nothing. */
  find(em: EntityManager, userId: string, mediaId: string): Promise<MediaRow | undefined> {
    return row<MediaRow>(em, `SELECT ${COLUMNS} FROM media WHERE id = $1 AND user_id = $2`, [mediaId, userId]);
  }

  /**
   * Marks one of the user's attachments used now (a start, a template) and locks it for the caller's
   * transaction, so the retention clean-up cannot delete it under the start; undefined when it is gone.
   */
  use(em: EntityManager, userId: string, mediaId: string, now: Date): Promise<MediaRow | undefined> {
    return row<MediaRow>(
      em,
      `UPDATE media SET last_used_at = greatest(last_used_at, $3) WHERE id = $1 AND user_id = $2 RETURNING ${COLUMNS}`,
      [mediaId, userId, now],
    );
  }

  /** The job carries the reference (one per job, never per recipient). */
  async attachToJob(em: EntityManager, jobId: string, ref: MediaRef): Promise<void> {
    await rows(em, `UPDATE jobs SET media_id = $2, media = $3::jsonb WHERE id = $1`, [
      jobId,
      ref.mediaId,
      JSON.stringify(ref),
    ]);
  }

  async hold(em: EntityManager, userId: string, holder: string, mediaId: string): Promise<void> {
    await rows(
      em,
      `INSERT INTO media_holds (user_id, holder, media_id) VALUES ($1, $2, $3)
       ON CONFLICT (user_id, holder) DO UPDATE SET media_id = EXCLUDED.media_id`,
      [userId, holder, mediaId],
    );
  }

  async release(em: EntityManager, userId: string, holder: string): Promise<void> {
    await rows(em, `DELETE FROM media_holds WHERE user_id = $1 AND holder = $2`, [userId, holder]);
  }

  /**
   * Removes (and answers) up to `limit` attachments unused since `before` that no job with sending left
   * and no holder references. Rows are locked and skipped when locked, so replicas share the work.
   */
  expire(em: EntityManager, before: Date, limit: number): Promise<MediaRow[]> {
    return rows<MediaRow>(
      em,
      `DELETE FROM media WHERE id IN (
         SELECT m.id FROM media m
          WHERE m.last_used_at < $1
            AND NOT EXISTS (SELECT 1 FROM media_holds h WHERE h.media_id = m.id)
            AND NOT EXISTS (SELECT 1 FROM jobs j WHERE j.media_id = m.id AND j.status IN ${ACTIVE})
          ORDER BY m.last_used_at
          LIMIT $2
          FOR UPDATE SKIP LOCKED)
       RETURNING ${COLUMNS}`,
      [before, limit],
    );
  }
}
