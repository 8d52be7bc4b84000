import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { unzipSync, strFromU8 } from 'fflate';
import { Kvm } from '@nats-io/kv';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { ACCOUNT_MESSAGES, ACCOUNT_TAKEOUTS_BUCKET } from '@bns/contracts';
import { userKeyOf } from '@bns/service-kit';
import { startSystem, waitFor, type System } from '@bns/testing';
import { linkedUser, signIn, type Client } from './helpers.js';

/**
 * "Download my data" through the real gateway and every owning service: the zip holds a JSON and a CSV
 * file per area, and each JSON is what the API shows for the same data; one runs per user at a time;
 * the download is in the audit log; another user's data is not in it.
 */

let sys: System;
let nc: NatsConnection;

beforeAll(async () => {
  sys = await startSystem({
    services: ['integrations', 'jobs', 'templates', 'sessions', 'dashboard', 'contacts'],
    shards: 1,
    env: { SIM_READY_DELAY_MS: '50' },
    serviceEnv: { gateway: { RATE_LIMIT_BURST: '1000' }, jobs: { SEND_DELAY_MS: '20', JOBS_POLL_MS: '100' } },
  });
  nc = await connect({ servers: sys.nats.url });
}, 240_000);

afterAll(async () => {
  await nc?.close();
  await sys?.stop();
});

async function download(user: Client): Promise<{ status: number; type: string | null; body: Buffer }> {
  const res = await fetch(`${sys.gateway.url}/api/account/export`, {
    headers: { authorization: `Bearer ${user.token}` },
  });
  return { status: res.status, type: res.headers.get('content-type'), body: Buffer.from(await res.arrayBuffer()) };
}

const json = (files: Record<string, Uint8Array>, name: string): unknown => JSON.parse(strFromU8(files[name]!));
const csvLines = (files: Record<string, Uint8Array>, name: string) =>
  strFromU8(files[name]!)
    .replace(/^\uFEFF/, '')
    .trimEnd()
    .split('\r\n');

describe('take-out', () => {
  it("holds one JSON and one CSV per area, each JSON as the API shows it, and nobody else's data", async () => {
    const ann = await linkedUser(sys.gateway.url, 'ann');
    const other = await signIn(sys.gateway.url, 'other');
    expect((await other.post(`/api/opt-outs/${other.userId}`, { phoneNumbers: ['98887777'] })).status).toBe(200);

    expect(
      (await ann.post(`/api/templates/${ann.userId}`, { name: 'Greeting', message_content: 'Hi {{name}}' })).status,
    ).toBe(201);
    expect((await ann.post(`/api/opt-outs/${ann.userId}`, { phoneNumbers: ['91112222', '93334444'] })).status).toBe(
      200,
    );
    expect((await ann.post('/api/contacts', { phone: '61234567', name: '=Chan', tags: ['vip'] })).status).toBe(201);
    const started = await ann.post('/start-bulk-messages', {
      clerkUserId: ann.userId,
      message: 'Hello {{name}}',
      recipients: [
        { phone: '91234567', variables: { name: 'Ann' } },
        { phone: '92345678', variables: { name: 'Bo' } },
      ],
    });
    expect(started.status).toBe(200);
    const jobId = started.body.jobId as string;
    await waitFor(
      async () => ((await ann.get(`/job-status/${jobId}`)).body.job?.status === 'completed' ? true : undefined),
      60_000,
      200,
      'the campaign to complete',
    );
    // The read receipts come after the job completes and change the results and the contacts' facts: the
    // take-out and the API answers it is compared with must both be taken after the last one.
    await waitFor(
      async () => {
        const rows = (await ann.get(`/job-results/${jobId}?limit=500`)).body.results as Array<{ status: string }>;
        const contacts = (await ann.get('/api/contacts?limit=200')).body.contacts as Array<{
          phone: string;
          facts: { lastReadAt: string | null };
        }>;
        const read = contacts.filter((c) => ['91234567', '92345678'].includes(c.phone) && c.facts.lastReadAt);
        return rows.length === 2 && rows.every((r) => r.status === 'read') && read.length === 2 ? true : undefined;
      },
      30_000,
      200,
      'both read receipts in the report and the contact book',
    );
    // After the campaign: the careful preset's pauses would hold it for minutes.
    expect((await ann.put(`/api/sending-policy/${ann.userId}`, { preset: 'careful' })).status).toBe(200);
    await waitFor(
      async () => {
        const kinds = ((await ann.get('/api/audit?limit=200')).body.entries as Array<{ kind: string }>).map(
          (e) => e.kind,
        );
        return kinds.includes('campaign.started') && kinds.includes('policy.changed');
      },
      10_000,
      100,
      'the campaign and policy entries',
    );

    const before = await ann.get('/api/audit?limit=200');
    const res = await download(ann);
    expect(res.status).toBe(200);
    expect(res.type).toBe('application/zip');
    const files = unzipSync(new Uint8Array(res.body));
    expect(Object.keys(files).sort()).toEqual(
      [
        'audit-log.csv',
        'audit-log.json',
        'campaign-results.csv',
        'campaigns.csv',
        'campaigns.json',
        'contacts.csv',
        'contacts.json',
        'opt-outs.csv',
        'opt-outs.json',
        'policy.csv',
        'policy.json',
        'preferences.csv',
        'preferences.json',
        'templates.csv',
        'templates.json',
      ].sort(),
    );

    expect(json(files, 'templates.json')).toEqual((await ann.get(`/api/templates/${ann.userId}`)).body.templates);
    expect(json(files, 'opt-outs.json')).toEqual((await ann.get(`/api/opt-outs/${ann.userId}?limit=200`)).body.optOuts);
    expect(json(files, 'contacts.json')).toEqual((await ann.get('/api/contacts?limit=200')).body.contacts);
    expect(json(files, 'policy.json')).toEqual((await ann.get(`/api/sending-policy/${ann.userId}`)).body.policy);
    expect(json(files, 'audit-log.json')).toEqual(before.body.entries);

    const history = (await ann.get(`/api/jobs/${ann.userId}`)).body.jobs as Array<Record<string, unknown>>;
    const results = (await ann.get(`/job-results/${jobId}?limit=500`)).body.results as unknown[];
    expect(results).toHaveLength(2);
    expect(json(files, 'campaigns.json')).toEqual(history.map((j) => ({ ...j, results })));

    // The CSVs: a header and a line per item, formulas neutralised.
    expect(csvLines(files, 'opt-outs.csv')).toHaveLength(3);
    expect(csvLines(files, 'campaign-results.csv')).toHaveLength(3);
    expect(csvLines(files, 'campaign-results.csv')[1]).toContain(jobId);
    expect(csvLines(files, 'contacts.csv').some((l) => l.includes("61234567,'=Chan"))).toBe(true);
    expect(csvLines(files, 'campaigns.csv')[0]!.split(',')).toContain('detailsPurgedAfterDays');
    expect(Buffer.from(res.body).toString('latin1')).not.toContain('98887777');
    expect(JSON.stringify(Object.fromEntries(Object.entries(files).map(([k, v]) => [k, strFromU8(v)])))).not.toContain(
      other.userId,
    );

    // The download itself is in the audit log.
    await waitFor(
      async () => (await ann.get('/api/audit?kind=takeout.downloaded')).body.entries.length === 1,
      10_000,
      100,
      'the take-out entry',
    );
  }, 150_000);

  it('answers a plain-text 409 while another take-out of the same user runs', async () => {
    const bo = await signIn(sys.gateway.url, 'bo');
    // Another replica holding bo's take-out, as the gateways see it.
    const kv = await new Kvm(nc).open(ACCOUNT_TAKEOUTS_BUCKET);
    await kv.create(userKeyOf(bo.userId), String(Date.now()));
    const refused = await download(bo);
    expect(refused.status).toBe(409);
    expect(refused.type).toMatch(/^text\/plain/);
    expect(refused.body.toString()).toBe(ACCOUNT_MESSAGES.takeoutRunning);
    // Another user is not held up, and once the other one ends bo's goes ahead.
    expect((await download(await signIn(sys.gateway.url, 'cy'))).status).toBe(200);
    await kv.delete(userKeyOf(bo.userId));
    expect((await download(bo)).status).toBe(200);
    expect((await bo.get('/api/audit?kind=takeout.downloaded')).status).toBe(200);
  });
});
