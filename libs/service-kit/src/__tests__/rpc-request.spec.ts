import { describe, expect, it } from '@jest/globals';
import { PATTERN_METADATA } from '@nestjs/microservices/constants.js';
import { PIPES_METADATA } from '@nestjs/common/constants.js';
import { CommonErrorCode, ErrorKind, SessionsErrorCode } from '@bns/contracts';
import { AppError } from '../errors/app-error.js';
import { Rpc, RpcRequestPipe } from '../nats/rpc.decorator.js';

/** What Nest's PipesConsumer passes for `@Payload()` and for `@Ctx()`. */
const PAYLOAD = { type: 'body' } as const;
const CONTEXT = { type: 'custom' } as const;

function refusal(fn: () => unknown): AppError {
  try {
    fn();
  } catch (err) {
    return err as AppError;
  }
  throw new Error('expected a refusal');
}

describe('@Rpc / RpcRequestPipe', () => {
  it('passes a good request on, parsed (undeclared fields dropped)', () => {
    const pipe = new RpcRequestPipe('jobs.status');
    expect(pipe.transform({ userId: 'u1', jobId: 'j1', extra: 1 }, PAYLOAD)).toEqual({ userId: 'u1', jobId: 'j1' });
  });

  it('refuses a bad one as a validation error naming the field', () => {
    const err = refusal(() => new RpcRequestPipe('jobs.status').transform({ userId: 'u1' }, PAYLOAD));
    expect(err).toBeInstanceOf(AppError);
    expect(err.toPayload()).toEqual({
      kind: ErrorKind.Validation,
      code: CommonErrorCode.InvalidRequest,
      message: 'jobId is required',
      errors: { jobId: 'jobId is required' },
    });
  });

  it('answers the sessions service its own code', () => {
    const err = refusal(() => new RpcRequestPipe('sessions.status').transform({ userId: '' }, PAYLOAD));
    expect([err.code, err.message]).toEqual([SessionsErrorCode.InvalidRequest, 'userId must not be empty']);
  });

  it('leaves any other argument alone', () => {
    const ctx = { not: 'a request' };
    expect(new RpcRequestPipe('jobs.status').transform(ctx, CONTEXT)).toBe(ctx);
  });

  it('registers the logical key and the pipe on the handler', () => {
    class Handler {
      @Rpc('sessions.connect')
      connect(): void {}
    }
    const handler = Object.getOwnPropertyDescriptor(Handler.prototype, 'connect')!.value as object;
    expect(Reflect.getMetadata(PATTERN_METADATA, handler)).toEqual(['sessions.connect']);
    const pipes = Reflect.getMetadata(PIPES_METADATA, handler) as unknown[];
    expect(pipes).toEqual([expect.any(RpcRequestPipe)]);
    expect((pipes[0] as RpcRequestPipe<'sessions.connect'>).key).toBe('sessions.connect');
  });
});
