import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { connect } from '@nats-io/transport-node';
import { Objm } from '@nats-io/obj';
import pg from 'pg';
import { MEDIA_BUCKET, MEDIA_MESSAGES } from '@bns/contracts';
import {
  api,
  devSignIn,
  mediaFiles,
  simulatorOutbox,
  startSystem,
  waitFor,
  type DevSession,
  type System,
} from '@bns/testing';
import { linkedUser } from './linked-user.js';

const { BAD_MEDIA, GOOD_MEDIA, expectedMessage, png, pdf } = mediaFiles;

/** A multipart body written by hand, so a test controls every byte of the part headers (names with paths, empty names). */
function multipart(parts: Array<{ field: string; name?: string; bytes: Buffer }>): { body: Buffer; type: string } {
  const boundary = `----bns${Math.random().toString(16).slice(2)}`;
  const chunks: Buffer[] = [];
  for (const p of parts) {
    // A name with control characters cannot be a quoted string: it goes RFC 5987-encoded, as browsers may send it.
    // eslint-disable-next-line no-control-regex -- control characters are what this looks for
    const controls = /[\u0000-\u001f\u007f]/;
    const disposition =
      p.name === undefined
        ? `form-data; name="${p.field}"`
        : controls.test(p.name)
          ? `form-data; name="${p.field}"; filename*=UTF-8''${encodeURIComponent(p.name)}`
          : `form-data; name="${p.field}"; filename="${p.name.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
    chunks.push(
      Buffer.from(
        `--${boundary}\r\nContent-Disposition: ${disposition}\r\nContent-Type: application/octet-stream\r\n\r\n`,
      ),
    );
    chunks.push(p.bytes, Buffer.from('\r\n'));
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return { body: Buffer.concat(chunks), type: `multipart/form-data; boundary=${boundary}` };
}

describe('attachments: upload, ownership, and a campaign that carries one', () => {
  let sys: System;
  let url: string;
  let ann: DevSession;
  let bob: DevSession;
  const FAIL_MEDIA = '91110000';

  const upload = async (
    who: DevSession,
    parts: Array<{ field: string; name?: string; bytes: Buffer }>,
    contentType?: string,
  ) => {
    const { body, type } = multipart(parts);
    const res = await fetch(`${url}/api/media`, {
      method: 'POST',
      headers: { authorization: `Bearer ${who.token}`, 'content-type': contentType ?? type },
      body,
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };
  const uploadFile = (who: DevSession, name: string, bytes: Buffer) => upload(who, [{ field: 'file', name, bytes }]);

  beforeAll(async () => {
    sys = await startSystem({
      services: ['templates', 'jobs', 'sessions'],
      shards: 1,
      env: { SEND_DELAY_MS: '0', SIM_FAIL_MEDIA_NUMBERS: FAIL_MEDIA },
    });
    url = sys.gateway.url;
    ann = await linkedUser(url, 'ann-media@shop.hk');
    bob = await devSignIn(url, 'bob-media@shop.hk');
  }, 240_000);
  afterAll(() => sys?.stop());

  it('accepts each kind of file, typed by its bytes', async () => {
    for (const good of GOOD_MEDIA) {
      const bytes = good.bytes();
      const res = await uploadFile(ann, good.name, bytes);
      expect({ name: good.name, status: res.status, kind: res.body.kind, size: res.body.size }).toEqual({
        name: good.name,
        status: 201,
        kind: good.kind,
        size: bytes.length,
      });
      expect(res.body).toMatchObject({
        success: true,
        fileName: good.name,
        sha256: expect.stringMatching(/^[0-9a-f]{64}$/),
      });
    }
  });

  /** The objects in the media bucket (deleted ones left out). */
  const storedObjects = async () => {
    const nc = await connect({ servers: sys.nats.url });
    try {
      const store = await new Objm(nc).open(MEDIA_BUCKET);
      return (await store.list()).filter((o) => !o.deleted).map((o) => o.name);
    } finally {
      await nc.close();
    }
  };

  it('refuses bad files with a plain reason, and keeps none of them', async () => {
    const before = (await storedObjects()).sort();
    for (const bad of BAD_MEDIA) {
      const res = await uploadFile(ann, bad.name, bad.bytes());
      expect({ label: bad.label, status: res.status, error: res.body.error }).toEqual({
        label: bad.label,
        status: bad.status ?? 400,
        error: expectedMessage(MEDIA_MESSAGES, bad),
      });
    }
    const noName = await upload(ann, [{ field: 'file', name: '', bytes: png() }]);
    expect([noName.status, noName.body.error]).toEqual([400, MEDIA_MESSAGES.noName]);
    const noFile = await upload(ann, [{ field: 'other', bytes: Buffer.from('x') }]);
    expect([noFile.status, noFile.body.error]).toEqual([400, MEDIA_MESSAGES.noFile]);
    const two = await upload(ann, [
      { field: 'file', name: 'a.png', bytes: png() },
      { field: 'file', name: 'b.pdf', bytes: pdf() },
    ]);
    expect([two.status, two.body.error]).toEqual([400, MEDIA_MESSAGES.moreThanOneFile]);
    const json = await api(url, ann.token).post('/api/media', { file: 'x' });
    expect([json.status, json.body.error]).toEqual([400, MEDIA_MESSAGES.notMultipart]);
    // Nothing refused is left in the store.
    let now: string[] = [];
    await waitFor(
      async () => {
        now = (await storedObjects()).sort();
        return now.join() === before.join();
      },
      10_000,
      200,
      'no refused upload left in the store',
    ).catch(() => expect(now).toEqual(before));
  });

  it('stores the same file once per user, and shows it to nobody else', async () => {
    const nc = await connect({ servers: sys.nats.url });
    try {
      const store = await new Objm(nc).open(MEDIA_BUCKET);
      const count = async () => {
        let n = 0;
        for (const o of await store.list()) if (!o.deleted) n++;
        return n;
      };
      const before = await count();
      const bytes = pdf('BT (Menu of the week) Tj ET');
      const first = await uploadFile(ann, 'menu.pdf', bytes);
      const again = await uploadFile(ann, 'menu-copy.pdf', bytes);
      expect(first.status).toBe(201);
      expect(again.body.mediaId).toBe(first.body.mediaId);
      await waitFor(async () => (await count()) === before + 1, 5000, 100, 'one stored object');
      // Another user's upload of the same bytes is theirs: a new id, a second object.
      const bobs = await uploadFile(bob, 'menu.pdf', bytes);
      expect(bobs.body.mediaId).not.toBe(first.body.mediaId);
      await waitFor(async () => (await count()) === before + 2, 5000, 100, 'bob’s own object');

      const mine = await api(url, ann.token).get(`/api/media/${String(first.body.mediaId)}`);
      expect(mine.status).toBe(200);
      expect(mine.body).toMatchObject({ mediaId: first.body.mediaId, kind: 'document', fileName: 'menu.pdf' });
      for (const path of [`/api/media/${String(first.body.mediaId)}`, '/api/media/med_unknown']) {
        const res = await api(url, bob.token).get(path);
        expect([path, res.status, res.body.error]).toEqual([path, 404, MEDIA_MESSAGES.notFound]);
      }
      // A foreign or unknown attachment on a start is 404 before the WhatsApp-link check (Bob is not linked).
      for (const mediaId of [first.body.mediaId, 'med_unknown', 42]) {
        const res = await api(url, bob.token).post('/start-bulk-messages', {
          message: 'Hi',
          phoneNumbers: ['91234567'],
          mediaId,
        });
        expect([res.status, res.body.error]).toEqual([404, MEDIA_MESSAGES.notFound]);
      }
    } finally {
      await nc.close();
    }
  });

  it('keeps an attachment on a template: checked first, held while the template has it, brought along by Use', async () => {
    const mine = await uploadFile(ann, 'offer.pdf', pdf('BT (Offer) Tj ET'));
    const bobs = await uploadFile(bob, 'bob.png', png(3000));
    expect([mine.status, bobs.status]).toEqual([201, 201]);
    const templates = `/api/templates/${ann.userId}`;
    // Another user's or an unknown attachment is 404, before the form is judged (an empty name here).
    for (const mediaId of [bobs.body.mediaId, 'med_unknown', '../etc', 7]) {
      for (const body of [
        { name: 'Offer', message_content: 'See the offer', mediaId },
        { name: '', message_content: '', mediaId },
      ]) {
        const res = await api(url, ann.token).post(templates, body);
        expect([String(mediaId), res.status, res.body.error]).toEqual([String(mediaId), 404, MEDIA_MESSAGES.notFound]);
      }
    }
    const holds = async (mediaId: unknown) => {
      const db = new pg.Client({ connectionString: sys.postgres.url });
      await db.connect();
      try {
        const found = await db.query(`SELECT holder FROM jobs.media_holds WHERE media_id = $1 ORDER BY holder`, [
          mediaId,
        ]);
        return found.rows.map((r: { holder: string }) => r.holder);
      } finally {
        await db.end();
      }
    };
    // No refused create left a hold behind.
    expect(await holds(bobs.body.mediaId)).toEqual([]);
    expect(await holds(mine.body.mediaId)).toEqual([]);

    const created = await api(url, ann.token).post(templates, {
      name: 'Offer',
      message_content: 'See the offer',
      mediaId: mine.body.mediaId,
    });
    expect(created.status).toBe(201);
    const template = created.body.template as { id: string; mediaId?: string };
    expect(template.mediaId).toBe(mine.body.mediaId);
    expect(await holds(mine.body.mediaId)).toEqual([`template:${template.id}`]);

    // A form refused after a new attachment was named leaves the template and its hold as they were.
    const refused = await api(url, ann.token).put(`${templates}/${template.id}`, {
      name: '',
      mediaId: bobs.body.mediaId,
    });
    expect([refused.status, refused.body.error]).toEqual([404, MEDIA_MESSAGES.notFound]);
    const other = await uploadFile(ann, 'other.png', png(4000));
    const badForm = await api(url, ann.token).put(`${templates}/${template.id}`, {
      name: '',
      mediaId: other.body.mediaId,
    });
    expect(badForm.status).toBe(400);
    expect(await holds(mine.body.mediaId)).toEqual([`template:${template.id}`]);
    expect(await holds(other.body.mediaId)).toEqual([]);

    const used = await api(url, ann.token).post(`${templates}/${template.id}/use`, {});
    expect(used.status).toBe(200);
    expect((used.body.template as { mediaId?: string }).mediaId).toBe(mine.body.mediaId);

    const copy = await api(url, ann.token).post(`${templates}/${template.id}/duplicate`, {});
    expect(copy.status).toBe(201);
    const copyId = (copy.body.template as { id: string }).id;
    expect((copy.body.template as { mediaId?: string }).mediaId).toBe(mine.body.mediaId);
    expect(await holds(mine.body.mediaId)).toEqual([`template:${template.id}`, `template:${copyId}`].sort());

    const swapped = await api(url, ann.token).put(`${templates}/${template.id}`, { mediaId: other.body.mediaId });
    expect((swapped.body.template as { mediaId?: string }).mediaId).toBe(other.body.mediaId);
    expect(await holds(other.body.mediaId)).toEqual([`template:${template.id}`]);
    const removed = await api(url, ann.token).put(`${templates}/${template.id}`, { mediaId: null });
    expect(removed.status).toBe(200);
    expect(removed.body.template).not.toHaveProperty('mediaId');
    expect(await holds(other.body.mediaId)).toEqual([]);

    expect((await api(url, ann.token).delete(`${templates}/${copyId}`)).status).toBe(200);
    expect(await holds(mine.body.mediaId)).toEqual([]);
    // Bob sees none of it.
    const bobsView = await api(url, bob.token).get(`/api/templates/${bob.userId}`);
    expect(bobsView.body.templates).toEqual([]);
  }, 60_000);

  it('sends a campaign with an attachment to every recipient once, with its caption', async () => {
    // Shared 2-core machines: the campaign itself takes seconds.
    const image = png(200_000);
    const up = await uploadFile(ann, 'poster.png', image);
    expect(up.status).toBe(201);
    const numbers = ['91230001', '91230002', '91230003', '91230004', FAIL_MEDIA];
    const start = await api(url, ann.token).post('/start-bulk-messages', {
      message: 'Our new poster',
      phoneNumbers: numbers,
      mediaId: up.body.mediaId,
    });
    expect(start.status).toBe(200);
    const jobId = start.body.jobId as string;
    let job: Record<string, any> = {};
    await waitFor(
      async () => {
        job = (await api(url, ann.token).get(`/job-status/${jobId}`)).body.job;
        return job?.status === 'completed' || job?.status === 'failed';
      },
      60_000,
      200,
      'the campaign to finish',
    );
    expect(job.progress).toMatchObject({ total: 5, sent: 4, failed: 1 });
    expect(job.results.failedList).toEqual([
      expect.objectContaining({ phoneNumber: FAIL_MEDIA, error: MEDIA_MESSAGES.sendUploadFailed }),
    ]);
    const outbox = (await simulatorOutbox(url, ann.token)).filter((m) => m.text === 'Our new poster');
    expect(outbox.map((m) => m.to.slice(-8)).sort()).toEqual(numbers.slice(0, 4).sort());
    for (const m of outbox) {
      expect(m.media).toEqual({ kind: 'image', sha256: up.body.sha256, size: image.length, fileName: 'poster.png' });
    }
    // The report, the campaign history and the export say the messages carried it.
    const attachment = { mediaId: up.body.mediaId, kind: 'image', fileName: 'poster.png', size: image.length };
    expect(job.attachment).toEqual(attachment);
    const history = await api(url, ann.token).get(`/api/jobs/${ann.userId}`);
    const item = (history.body.jobs as Array<Record<string, unknown>>).find((j) => j.jobId === jobId);
    expect(item?.attachment).toEqual(attachment);
    const csv = await fetch(`${url}/job-results/${jobId}/export?format=csv`, {
      headers: { authorization: `Bearer ${ann.token}` },
    });
    expect(csv.status).toBe(200);
    const lines = (await csv.text())
      .replace(/^\uFEFF/, '')
      .trimEnd()
      .split('\r\n');
    const header = lines[0]!.split(',');
    expect(header).toContain('Attachment');
    expect(lines.slice(1)).toHaveLength(5);
    for (const line of lines.slice(1)) expect(line.split(',')[header.indexOf('Attachment')]).toBe('poster.png');
  }, 120_000);
});
