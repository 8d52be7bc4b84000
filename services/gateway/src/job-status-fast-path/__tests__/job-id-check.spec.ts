import { afterEach, describe, expect, it } from '@jest/globals';
import { randomBytes, randomUUID } from 'node:crypto';
import { AppError, mintJobId, type RpcClient } from '@bns/service-kit';
import { JobIdCheck } from '../job-id-check.js';

/** A jobs service that answers `jobs.idScheme` with whatever `answer` holds now, counting the asks. */
function fakeJobs(answer: () => { key: Buffer; legacyIds: boolean } | Error) {
  const jobs = { asked: 0 };
  const rpc = {
    call: async (key: string) => {
      expect(key).toBe('jobs.idScheme');
      jobs.asked++;
      const a = answer();
      if (a instanceof Error) throw a;
      return { key: a.key.toString('base64'), legacyIds: a.legacyIds };
    },
  } as unknown as RpcClient;
  return { rpc, jobs };
}

const until = async (what: () => boolean) => {
  const end = Date.now() + 4000;
  while (!what() && Date.now() < end) await new Promise((r) => setTimeout(r, 5));
  expect(what()).toBe(true);
};

describe("JobIdCheck (the gateway's job id check)", () => {
  const checks: JobIdCheck[] = [];
  afterEach(() => {
    for (const c of checks.splice(0)) c.onModuleDestroy();
  });
  const start = (rpc: RpcClient) => {
    const check = new JobIdCheck(rpc);
    checks.push(check);
    check.onApplicationBootstrap();
    return check;
  };

  it('until the jobs service answers, passes every UUID on and refuses only what is no UUID; then refuses by the MAC', async () => {
    let up = false;
    const key = randomBytes(32);
    const { rpc, jobs } = fakeJobs(() => (up ? { key, legacyIds: false } : AppError.unavailable()));
    const check = start(rpc);
    await until(() => jobs.asked === 1);
    const foreign = mintJobId(key, 'user_b');
    expect([
      check.mayExist('user_a', randomUUID()),
      check.mayExist('user_a', foreign),
      check.mayExist('user_a', 'not-a-job'),
    ]).toEqual([true, true, false]);
    up = true;
    // Asked again within RETRY_MS (2 s).
    await until(() => !check.mayExist('user_a', foreign));
    expect(check.mayExist('user_b', foreign)).toBe(true);
    expect(check.mayExist('user_a', randomUUID())).toBe(false);
    expect(() => check.check('user_a', foreign)).toThrow(expect.objectContaining({ code: 'JOB_NOT_FOUND' }) as never);
  }, 10_000);

  it('a refused id asks the jobs service again, at most once per recheck time: a restored database with a new key is served', async () => {
    let key = randomBytes(32);
    const { rpc, jobs } = fakeJobs(() => ({ key, legacyIds: false }));
    const check = start(rpc);
    await until(() => jobs.asked === 1);
    await new Promise((r) => setTimeout(r, 5));
    // Made-up ids right after an ask: no new ask (the recheck time has not passed).
    for (let i = 0; i < 50; i++) expect(check.mayExist('user_a', randomUUID())).toBe(false);
    expect(jobs.asked).toBe(1);

    key = randomBytes(32);
    const fresh = mintJobId(key, 'user_a');
    check.recheckAfterRefusalMs = 0;
    expect(check.mayExist('user_a', fresh)).toBe(false);
    await until(() => check.mayExist('user_a', fresh));
    expect(jobs.asked).toBe(2);
  });

  it('while jobs of random ids may exist (legacyIds), a version 4 id is passed on', async () => {
    const key = randomBytes(32);
    const { rpc, jobs } = fakeJobs(() => ({ key, legacyIds: true }));
    const check = start(rpc);
    await until(() => jobs.asked === 1);
    await until(() => !check.mayExist('user_a', mintJobId(key, 'user_b')));
    expect(check.mayExist('user_a', randomUUID())).toBe(true);
  });
});
