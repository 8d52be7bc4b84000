import { describe, expect, it } from '@jest/globals';
import type { MessageStatus, MessageStatusEvent } from '@bns/contracts';
import { applyMessageEvent, type MessageState } from '../message-projection.js';

let seq = 0;
function ev(status: MessageStatus, at: string, extra: Partial<MessageStatusEvent> = {}): MessageStatusEvent {
  return {
    eventId: `e${++seq}`,
    userId: 'u1',
    at,
    jobId: 'job1',
    idempotencyKey: 'job1:85291234567',
    recipient: '85291234567',
    status,
    content: 'Hello Ann',
    ...extra,
  };
}

function fold(events: MessageStatusEvent[]) {
  let state: MessageState | undefined;
  const counted: string[] = [];
  for (const e of events) {
    const step = applyMessageEvent(state, e);
    state = step.next;
    if (step.counted) counted.push(`${step.counted.outcome}@${step.counted.month}`);
  }
  return { state: state!, counted };
}

describe('applyMessageEvent', () => {
  it('moves forward through sent, delivered, read and counts the send once', () => {
    const { state, counted } = fold([
      ev('sent', '2025-03-31T23:59:00Z'),
      ev('delivered', '2025-04-01T00:01:00Z'),
      ev('read', '2025-04-01T00:02:00Z'),
    ]);
    expect(state.status).toBe('read');
    expect(state.sentAt?.toISOString()).toBe('2025-03-31T23:59:00.000Z');
    expect(counted).toEqual(['sent@2025-03-01']);
  });

  it('never lets a late sent overwrite read, and takes the send time from it', () => {
    const { state, counted } = fold([
      ev('read', '2025-05-02T10:00:05Z'),
      ev('delivered', '2025-05-02T10:00:03Z'),
      ev('sent', '2025-05-02T10:00:00Z'),
    ]);
    expect(state.status).toBe('read');
    expect(state.sentAt?.toISOString()).toBe('2025-05-02T10:00:00.000Z');
    expect(state.createdAt.toISOString()).toBe('2025-05-02T10:00:00.000Z');
    expect(counted).toEqual(['sent@2025-05-01']);
  });

  it('keeps the first terminal of sent and failed', () => {
    expect(
      fold([ev('failed', '2025-05-02T10:00:00Z', { error: 'not on WhatsApp' }), ev('sent', '2025-05-02T10:00:01Z')])
        .state,
    ).toMatchObject({
      status: 'failed',
      error: 'not on WhatsApp',
      outcome: 'failed',
    });
    expect(
      fold([ev('sent', '2025-05-02T10:00:00Z'), ev('failed', '2025-05-02T10:00:01Z', { error: 'x' })]).state,
    ).toMatchObject({
      status: 'sent',
      error: null,
      outcome: 'sent',
    });
  });

  it('moves a send WhatsApp accepted and then refused from sent to failed, in the month it was counted', () => {
    const refused = ev('failed', '2025-04-01T00:00:05Z', { error: 'refused', refused: true });
    const { state, counted } = fold([ev('sent', '2025-03-31T23:59:59Z'), refused]);
    expect(state).toMatchObject({ status: 'failed', outcome: 'failed', error: 'refused' });
    expect(counted).toEqual(['sent@2025-03-01', 'failed@2025-03-01']);
    const step = applyMessageEvent(fold([ev('sent', '2025-03-31T23:59:59Z')]).state, refused);
    expect(step.counted).toEqual({ outcome: 'failed', month: '2025-03-01', moved: true });
    // Again (a redelivery): nothing more moves.
    expect(applyMessageEvent(state, refused).counted).toBeUndefined();
    // Refused before the sent event arrived: failed once, and the late sent changes nothing.
    const early = fold([refused, ev('sent', '2025-03-31T23:59:59Z')]);
    expect(early.state).toMatchObject({ status: 'failed', outcome: 'failed' });
    expect(early.counted).toEqual(['failed@2025-04-01']);
    // Delivered first: it reached the phone, and stays delivered.
    expect(
      fold([ev('sent', '2025-05-02T10:00:00Z'), ev('delivered', '2025-05-02T10:00:01Z'), refused]).state,
    ).toMatchObject({
      status: 'delivered',
      outcome: 'sent',
    });
  });

  it('is idempotent: the same event twice changes nothing and counts once', () => {
    const e = ev('failed', '2025-05-02T10:00:00Z', { error: 'boom' });
    const once = fold([e]);
    const twice = fold([e, e]);
    expect(twice.state).toEqual(once.state);
    expect(twice.counted).toEqual(['failed@2025-05-01']);
  });

  it('fills content an ack did not carry from the job event that follows', () => {
    const { state } = fold([
      ev('delivered', '2025-05-02T10:00:03Z', { content: '' }),
      ev('sent', '2025-05-02T10:00:00Z'),
    ]);
    expect(state.content).toBe('Hello Ann');
  });

  it('leaves a pending message unsent and uncounted', () => {
    const { state, counted } = fold([ev('pending', '2025-05-02T10:00:00Z')]);
    expect(state).toMatchObject({ status: 'pending', sentAt: null, outcome: null });
    expect(counted).toEqual([]);
  });
});
