import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Transactions } from '@bns/service-kit';
import { startInProcess, type InProcess } from '../../__tests__/in-process.js';
import { AdmissionRepository } from '../admission.repository.js';

const phones = (n: number, from: number) => Array.from({ length: n }, (_, i) => String(from + i));

/** The admission repository in-process on a real Postgres: idempotency keys and the caps' counts. */
describe('AdmissionRepository (in-process, real Postgres)', () => {
  let ip: InProcess;
  let starts: AdmissionRepository;
  let tx: Transactions;

  beforeAll(async () => {
    ip = await startInProcess();
    starts = ip.get(AdmissionRepository);
    tx = ip.get(Transactions);
  }, 60_000);
  afterAll(() => ip?.close());

  it('an idempotency key is claimed once per user, and in-flight work is counted for the caps', async () => {
    const jobId = await ip.seedJob('user-e', phones(10, 52_000_000));
    const key = randomUUID();
    expect(await tx.run((em) => starts.claimStart(em, 'user-e', key, 'h1', jobId))).toBe(true);
    expect(await tx.run((em) => starts.claimStart(em, 'user-e', key, 'h2', jobId))).toBe(false);
    // The same key of another user is another key.
    const other = await ip.seedJob('user-f', ['61234567']);
    expect(await tx.run((em) => starts.claimStart(em, 'user-f', key, 'h1', other))).toBe(true);
    expect(await starts.findStart(tx.manager, 'user-e', key)).toMatchObject({
      id: jobId,
      requestHash: 'h1',
      total: 10,
    });
    expect(await tx.run((em) => starts.inFlight(em, 'user-e'))).toEqual({ jobs: 1, recipients: 10 });
  });
});
