import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Global, Module } from '@nestjs/common';
import { Test, type TestingModule } from '@nestjs/testing';
import type { NatsConnection } from '@nats-io/transport-node';
import { ErrorKind, JobsErrorCode } from '@bns/contracts';
import { AppError, connectNats, NATS_CONNECTION, RpcClient, SERVICE_ENV } from '@bns/service-kit';
import { startNats, waitFor, type Nats } from '@bns/testing';
import { JobStatusCache, JobStatusFastPathModule, JobStatusService } from '../index.js';
import { JobIdCheck } from '../job-id-check.js';

/**
 * The fast path's providers in-process (JobStatusFastPathModule from Nest DI, as the gateway wires
 * it), on a real nats-server: no build, no spawned gateway. No jobs service answers here, which is
 * what a gateway sees while the jobs service is starting or away.
 */
describe('JobStatusFastPathModule (in-process, real NATS)', () => {
  let storeDir: string;
  let nats: Nats;
  let nc: NatsConnection;
  let module: TestingModule;

  beforeAll(async () => {
    storeDir = mkdtempSync(join(tmpdir(), 'bns-gateway-medium-'));
    nats = await startNats({ storeDir });
    nc = await connectNats(nats.url, 'gateway-medium');
    // What KitModule provides the running gateway, globally.
    @Global()
    @Module({
      providers: [
        { provide: NATS_CONNECTION, useValue: nc },
        { provide: RpcClient, useValue: new RpcClient(nc, { shards: 1, timeoutMs: 1000 }) },
        { provide: SERVICE_ENV, useValue: { JOB_STATUS_CACHE_MS: 10_000, JOB_STATUS_CACHE_MAX: 100 } },
      ],
      exports: [NATS_CONNECTION, RpcClient, SERVICE_ENV],
    })
    class Kit {}
    module = await Test.createTestingModule({ imports: [Kit, JobStatusFastPathModule] }).compile();
    await module.init();
  }, 60_000);

  afterAll(async () => {
    await module?.close();
    await nc?.close();
    await nats?.stop();
  });

  const failureOf = async (p: Promise<unknown>): Promise<AppError> => {
    try {
      await p;
    } catch (err) {
      return err as AppError;
    }
    throw new Error('expected a failure');
  };

  it('without the jobs service: an id that is no UUID is "not found" from the id alone, a UUID is "unavailable" and nothing is remembered', async () => {
    const ids = module.get(JobIdCheck);
    const polls = module.get(JobStatusService);
    const cache = module.get(JobStatusCache);
    // Until the jobs service says how its ids are made, only ids that are no UUID are known to name nothing.
    expect([ids.mayExist('user_a', 'not-a-job'), ids.mayExist('user_a', randomUUID())]).toEqual([false, true]);
    const notFound = await failureOf(polls.answer('user_a', 'not-a-job', undefined, {} as never));
    expect({ kind: notFound.kind, code: notFound.code }).toEqual({
      kind: ErrorKind.NotFound,
      code: JobsErrorCode.NotFound,
    });
    const jobId = randomUUID();
    const unavailable = await failureOf(polls.answer('user_a', jobId, '*', {} as never));
    expect(unavailable.kind).toBe(ErrorKind.Unavailable);
    expect([cache.size, cache.missing('user_a', jobId), cache.version('user_a', jobId)]).toEqual([0, false, undefined]);
  });

  it('forgets every version it holds when NATS restarts (events may have been missed meanwhile)', async () => {
    const cache = module.get(JobStatusCache);
    const jobId = randomUUID();
    cache.remember('user_a', jobId, 'AAAAAAAAAAAAAAAAAAAAAA', cache.ticket('user_a'));
    expect(cache.version('user_a', jobId)).toBe('AAAAAAAAAAAAAAAAAAAAAA');
    await nats.stop();
    nats = await startNats({ storeDir, port: nats.port });
    await waitFor(async () => cache.size === 0, 15_000, 50, 'the cache forgetting on the reconnect');
    expect(cache.version('user_a', jobId)).toBeUndefined();
    // Kept again once NATS is back.
    cache.remember('user_a', jobId, 'BBBBBBBBBBBBBBBBBBBBBB', cache.ticket('user_a'));
    expect(cache.version('user_a', jobId)).toBe('BBBBBBBBBBBBBBBBBBBBBB');
  }, 30_000);
});
