import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { MEDIA_MESSAGES, PROBLEMS } from '@bns/contracts';
import { api, mediaFiles, simulatorOutbox, startSystem, waitFor, type System } from '@bns/testing';
import { ALL_SCOPES, createKey, linkedUser, signIn } from './helpers.js';

/**
 * Attachments through the /v1 API: POST /v1/media (multipart) and GET /v1/media/{id}, and mediaId on
 * POST /v1/messages and /v1/campaigns (or a template's own), each recipient's message carrying the file.
 */

let sys: System;

beforeAll(async () => {
  sys = await startSystem({
    services: ['integrations', 'jobs', 'templates', 'sessions'],
    shards: 1,
    serviceEnv: { gateway: { RATE_LIMIT_BURST: '1000' }, jobs: { SEND_DELAY_MS: '0', SEND_JITTER_MS: '0' } },
  });
}, 180_000);

afterAll(() => sys?.stop());

async function upload(secret: string, name: string, bytes: Buffer) {
  const form = new FormData();
  form.append('file', new Blob([new Uint8Array(bytes)]), name);
  const res = await fetch(`${sys.gateway.url}/v1/media`, {
    method: 'POST',
    headers: { authorization: `Bearer ${secret}` },
    body: form,
  });
  return { status: res.status, type: res.headers.get('content-type'), body: (await res.json()) as Record<string, any> };
}

const outboxWith = async (token: string, text: string, n: number) =>
  waitFor(async () => {
    const found = (await simulatorOutbox(sys.gateway.url, token)).filter((m) => m.text === text);
    return found.length >= n ? found : undefined;
  }, 30_000);

describe('/v1 attachments', () => {
  it('uploads a file, answers its metadata to its owner only, and refuses what it must', async () => {
    const shop = await signIn(sys.gateway.url, 'shop-media');
    const other = await signIn(sys.gateway.url, 'other-media');
    const secret = (await createKey(shop, ALL_SCOPES)).secret;
    const image = mediaFiles.png(4000);
    const up = await upload(secret, 'logo.png', image);
    expect(up.status).toBe(201);
    expect(up.body).toMatchObject({
      mediaId: expect.stringMatching(/^med_/),
      kind: 'image',
      size: image.length,
      sha256: expect.stringMatching(/^[0-9a-f]{64}$/),
      fileName: 'logo.png',
    });
    const key = api(sys.gateway.url, secret);
    const got = await key.get(`/v1/media/${up.body.mediaId}`);
    expect([got.status, got.body]).toEqual([200, up.body]);

    const othersKey = api(sys.gateway.url, (await createKey(other, ALL_SCOPES)).secret);
    for (const id of [up.body.mediaId, 'med_unknown']) {
      const res = await othersKey.get(`/v1/media/${id}`);
      expect([res.status, res.body.type, res.body.detail]).toEqual([
        404,
        PROBLEMS.notFound.type,
        MEDIA_MESSAGES.notFound,
      ]);
    }
    // A program named .pdf, and a JSON body, are refused in plain words as problems.
    const program = await upload(secret, 'invoice.pdf', Buffer.concat([Buffer.from('MZ'), Buffer.alloc(600, 1)]));
    expect([program.status, program.type, program.body.detail]).toEqual([
      400,
      expect.stringContaining('application/problem+json'),
      MEDIA_MESSAGES.program,
    ]);
    const json = await key.post('/v1/media', { file: 'x' });
    expect([json.status, json.body.detail]).toEqual([400, MEDIA_MESSAGES.notMultipart]);
    // Uploading needs a sending scope; reading one, `read`.
    const readOnly = (await createKey(shop, ['read'])).secret;
    expect((await upload(readOnly, 'logo.png', image)).status).toBe(403);
    expect((await api(sys.gateway.url, readOnly).get(`/v1/media/${up.body.mediaId}`)).status).toBe(200);
    const campaignsOnly = (await createKey(shop, ['campaigns:write'])).secret;
    expect((await upload(campaignsOnly, 'logo.png', image)).body.mediaId).toBe(up.body.mediaId);
  });

  it('sends a message, a template and a campaign with their attachment; a foreign one is 404 first', async () => {
    const shop = await linkedUser(sys.gateway.url, 'shop-send');
    const stranger = await signIn(sys.gateway.url, 'stranger');
    const secret = (await createKey(shop, ALL_SCOPES)).secret;
    const key = api(sys.gateway.url, secret);
    const strangers = await upload((await createKey(stranger, ALL_SCOPES)).secret, 'x.png', mediaFiles.png(2000));
    const invoice = await upload(secret, 'invoice.pdf', mediaFiles.pdf('BT (Invoice 1042) Tj ET'));
    const poster = await upload(secret, 'poster.png', mediaFiles.png(9000));
    expect([strangers.status, invoice.status, poster.status]).toEqual([201, 201, 201]);

    // Another user's or an unknown attachment: 404 before the body is judged (no `to` here).
    for (const mediaId of [strangers.body.mediaId, 'med_unknown']) {
      for (const [path, body] of [
        ['/v1/messages', { mediaId }],
        ['/v1/campaigns', { mediaId }],
      ] as const) {
        const res = await key.post(path, body);
        expect([path, res.status, res.body.detail]).toEqual([path, 404, MEDIA_MESSAGES.notFound]);
      }
    }

    const sent = await key.post('/v1/messages', {
      to: '91234001',
      text: 'Your invoice',
      mediaId: invoice.body.mediaId,
    });
    expect(sent.status).toBe(202);
    const [message] = await outboxWith(shop.token, 'Your invoice', 1);
    expect(message!.media).toEqual({
      kind: 'document',
      sha256: invoice.body.sha256,
      size: invoice.body.size,
      fileName: 'invoice.pdf',
    });

    const template = await shop.post(`/api/templates/${shop.userId}`, {
      name: 'Poster',
      message_content: 'Our new poster',
      mediaId: poster.body.mediaId,
    });
    expect(template.status).toBe(201);
    const fromTemplate = await key.post('/v1/messages', { to: '91234002', templateId: template.body.template.id });
    expect(fromTemplate.status).toBe(202);
    const [templated] = await outboxWith(shop.token, 'Our new poster', 1);
    expect(templated!.media).toMatchObject({ kind: 'image', sha256: poster.body.sha256, fileName: 'poster.png' });

    const numbers = ['91234101', '91234102', '91234103'];
    const campaign = await key.post('/v1/campaigns', {
      message: 'Spring sale',
      phoneNumbers: numbers,
      mediaId: poster.body.mediaId,
    });
    expect(campaign.status).toBe(201);
    const outbox = await outboxWith(shop.token, 'Spring sale', 3);
    expect(outbox.map((m) => m.to.slice(-8)).sort()).toEqual(numbers);
    for (const m of outbox) expect(m.media).toMatchObject({ kind: 'image', sha256: poster.body.sha256 });
  }, 90_000);

  it('the OpenAPI document lists the media paths', async () => {
    const doc = (await (await fetch(`${sys.gateway.url}/v1/openapi.json`)).json()) as {
      paths: Record<string, Record<string, { requestBody?: { content: Record<string, unknown> } }>>;
    };
    expect(Object.keys(doc.paths['/v1/media']!.post!.requestBody!.content)).toEqual(['multipart/form-data']);
    expect(doc.paths['/v1/media/{id}']!.get).toBeDefined();
    const messageBody = JSON.stringify(doc.paths['/v1/messages']!.post!.requestBody);
    expect(messageBody).toContain('mediaId');
    expect(JSON.stringify(doc.paths['/v1/campaigns']!.post!.requestBody)).toContain('mediaId');
  });
});
