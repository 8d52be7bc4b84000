import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { REPO_ROOT, startSystem, type System } from '@bns/testing';
import { ALL_SCOPES, createKey, linkedUser } from './helpers.js';

const run = promisify(execFile);

/** The README's "Use the API" curl block, run verbatim against a running system with a real key. */
function readmeBlock(): string {
  const readme = readFileSync(join(REPO_ROOT, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('## Use the API'));
  const block = /```bash\n([\s\S]*?)```/.exec(section);
  if (!readme.includes('## Use the API') || !block)
    throw new Error('README.md has no "Use the API" section with a bash block');
  return block[1]!;
}

let sys: System;

beforeAll(async () => {
  sys = await startSystem({
    services: ['integrations', 'jobs', 'templates', 'sessions'],
    shards: 1,
    serviceEnv: { gateway: { RATE_LIMIT_BURST: '1000' } },
  });
}, 180_000);

afterAll(() => sys?.stop());

describe('README: Use the API', () => {
  it('its curl examples run as written and answer what they say', async () => {
    const user = await linkedUser(sys.gateway.url, 'readme');
    const key = await createKey(user, ALL_SCOPES);
    const { stdout } = await run('bash', ['-euo', 'pipefail', '-c', readmeBlock()], {
      env: { ...process.env, BNS_URL: sys.gateway.url, BNS_KEY: key.secret },
      timeout: 60_000,
    });
    expect(stdout).toMatch(/"whatsapp":{"state":"(ready|exist)","phoneNumber"/);
    expect(stdout).toMatch(/"timeline":\[\{"status":"queued"/);
    expect(stdout).toContain('"status":"queued"');
    expect(stdout).toMatch(/"data":\[/);
    // The same block again: the message's Idempotency-Key answers the first message, no second one.
    await run('bash', ['-euo', 'pipefail', '-c', readmeBlock()], {
      env: { ...process.env, BNS_URL: sys.gateway.url, BNS_KEY: key.secret },
      timeout: 60_000,
    });
    const campaigns = (await (
      await fetch(`${sys.gateway.url}/v1/campaigns?limit=50`, { headers: { authorization: `Bearer ${key.secret}` } })
    ).json()) as { data: Array<{ message: string }> };
    expect(campaigns.data.filter((c) => c.message === 'Your order #1042 has shipped')).toHaveLength(1);
  }, 120_000);
});
