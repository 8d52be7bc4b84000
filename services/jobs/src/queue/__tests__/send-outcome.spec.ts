import { describe, expect, it } from '@jest/globals';
import { CommonErrorCode, ErrorKind, JOB_MESSAGES, SessionsErrorCode } from '@bns/contracts';
import { AppError } from '@bns/service-kit';
import { outcomeOfError, outcomeOfReply } from '../send-outcome.js';

describe('outcomeOfError', () => {
  it('not on WhatsApp (and any refusal) fails the recipient at once', () => {
    const err = AppError.validation(SessionsErrorCode.NotOnWhatsApp, 'number is not on WhatsApp');
    // The code is kept: a number WhatsApp does not know is remembered, so later jobs skip it.
    expect(outcomeOfError(err)).toEqual({
      kind: 'permanent',
      error: 'number is not on WhatsApp',
      code: SessionsErrorCode.NotOnWhatsApp,
    });
    expect(outcomeOfError(err.toPayload()).kind).toBe('permanent');
  });
  it('not linked pauses the job', () => {
    expect(outcomeOfError(AppError.conflict(SessionsErrorCode.NotLinked, 'WhatsApp is not connected')).kind).toBe(
      'unlinked',
    );
  });
  it('a send of the same key in flight is asked again without using a retry', () => {
    expect(outcomeOfError(AppError.conflict(SessionsErrorCode.SendInProgress, 'busy')).kind).toBe('busy');
  });
  it('a WhatsApp service that does not answer (timeout, no shard listening) is asked again without using a retry', () => {
    expect(outcomeOfError(AppError.unavailable())).toEqual({ kind: 'busy', error: JOB_MESSAGES.sessionsUnavailable });
  });
  it('internal errors and engine failures are retried', () => {
    expect(outcomeOfError(AppError.internal()).kind).toBe('transient');
    expect(outcomeOfError(AppError.conflict(SessionsErrorCode.SendFailed, 'engine crashed')).kind).toBe('transient');
    expect(outcomeOfError(new AppError(ErrorKind.RateLimited, CommonErrorCode.RateLimited, 'slow down')).kind).toBe(
      'transient',
    );
  });
  it('something that is not an error payload at all is an internal error, retried', () => {
    expect(outcomeOfError(new Error('boom')).kind).toBe('transient');
  });
});

describe('outcomeOfReply', () => {
  it('keeps the time and the duplicate flag of the first send', () => {
    const o = outcomeOfReply({ messageId: 'm1', status: 'sent', at: '2025-01-01T00:00:00.000Z', duplicate: true });
    expect(o).toEqual({ kind: 'sent', at: new Date('2025-01-01T00:00:00.000Z'), duplicate: true, messageId: 'm1' });
  });
});
