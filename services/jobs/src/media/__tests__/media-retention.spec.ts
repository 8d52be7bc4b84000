import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { NatsConnection } from '@nats-io/transport-node';
import { Objm, StorageType, type ObjectStore } from '@nats-io/obj';
import { MEDIA_BUCKET, MEDIA_MESSAGES } from '@bns/contracts';
import { connectNats, NATS_CONNECTION, Transactions } from '@bns/service-kit';
import { startNats, type Nats } from '@bns/testing';
import { startInProcess, type InProcess } from '../../__tests__/in-process.js';
import { MEDIA_CLOCK, type MediaClock } from '../media-clock.js';
import { MediaObjects } from '../media-objects.js';
import { MediaRepository } from '../media.repository.js';
import { JobsRepository } from '../../store/jobs.repository.js';
import { MediaLibrary } from '../media.service.js';

const DAY = 86_400_000;

/** The media library on a real Postgres and NATS object store, with a clock the test moves. */
describe('attachments: ownership, one copy per content, and the retention clean-up', () => {
  let nats: Nats;
  let nc: NatsConnection;
  let store: ObjectStore;
  let app: InProcess;
  let library: MediaLibrary;
  let now = new Date('2026-03-01T09:00:00Z');
  const clock: MediaClock = { now: () => now };

  beforeAll(async () => {
    nats = await startNats();
    nc = await connectNats(nats.url, 'jobs-media-spec');
    store = await new Objm(nc).create(MEDIA_BUCKET, { storage: StorageType.File });
    app = await startInProcess({ MEDIA_RETENTION_DAYS: '30' }, [
      { provide: NATS_CONNECTION, useValue: nc },
      { provide: MEDIA_CLOCK, useValue: clock },
      MediaRepository,
      MediaObjects,
      MediaLibrary,
    ]);
    library = app.get(MediaLibrary);
  }, 120_000);
  afterAll(async () => {
    await app?.close();
    await nc?.close();
    await nats?.stop();
  });

  const upload = async (userId: string, object: string, sha: string) => {
    await store.putBlob({ name: object }, Buffer.from(object));
    return library.register({
      userId,
      object,
      kind: 'image',
      mime: 'image/png',
      sha256: sha.repeat(64).slice(0, 64),
      size: 10,
      fileName: 'logo.png',
    });
  };
  const exists = async (object: string) => {
    const info = await store.info(object);
    return info !== null && !info.deleted;
  };

  it('answers the same id for the same bytes of one user, and "not found" to anyone else', async () => {
    const first = await upload('user_a', 'upl_a1', 'a');
    const again = await upload('user_a', 'upl_a2', 'a');
    expect(first.created).toBe(true);
    expect(again).toEqual({ media: first.media, created: false });
    const other = await upload('user_b', 'upl_b1', 'a');
    expect(other.media.mediaId).not.toBe(first.media.mediaId);
    await expect(library.get({ userId: 'user_b', mediaId: first.media.mediaId })).rejects.toMatchObject({
      message: MEDIA_MESSAGES.notFound,
    });
    await expect(library.get({ userId: 'user_a', mediaId: 42 })).rejects.toMatchObject({
      message: MEDIA_MESSAGES.notFound,
    });
  });

  it('deletes what nothing used for the retention period, and keeps what a job or a template holds', async () => {
    now = new Date('2026-04-01T09:00:00Z');
    const loose = await upload('user_c', 'upl_loose', 'c');
    const held = await upload('user_c', 'upl_held', 'd');
    const sending = await upload('user_c', 'upl_sending', 'e');
    await library.hold({ userId: 'user_c', holder: 'template:1', mediaId: held.media.mediaId });
    const jobId = await app.seedJob('user_c', ['91234567']);
    await app.get(Transactions).run(async (em) => {
      const ref = await library.use(em, 'user_c', sending.media.mediaId);
      await library.attachToJob(em, jobId, ref);
    });

    now = new Date(now.getTime() + 29 * DAY);
    await library.sweep();
    expect(await exists('upl_loose')).toBe(true);

    now = new Date(now.getTime() + 2 * DAY);
    expect(await library.sweep()).toBeGreaterThanOrEqual(1);
    expect(await exists('upl_loose')).toBe(false);
    await expect(library.get({ userId: 'user_c', mediaId: loose.media.mediaId })).rejects.toMatchObject({
      message: MEDIA_MESSAGES.notFound,
    });
    expect(await exists('upl_held')).toBe(true);
    expect(await exists('upl_sending')).toBe(true);

    // Released by the template and the job finished: the next clean-up after the period takes both.
    await library.hold({ userId: 'user_c', holder: 'template:1' });
    await app.db.query(`UPDATE jobs.jobs SET status = 'completed' WHERE id = $1`, [jobId]);
    now = new Date(now.getTime() + 31 * DAY);
    await library.sweep();
    expect(await exists('upl_held')).toBe(false);
    expect(await exists('upl_sending')).toBe(false);
    // The finished job still names its attachment for its report.
    expect((await app.get(JobsRepository).get(app.db.manager, jobId))?.media).toMatchObject({ fileName: 'logo.png' });
  });
});
