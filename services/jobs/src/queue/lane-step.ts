import type { MediaRef, SendingPolicy, SkipReason } from '@bns/contracts';
import type { JobsEnv } from '../config/env.js';
import type { OutboxRow } from '../events/job-journal.js';
import type { TakenCounters } from './lane-step.repository.js';
import type { LaneCounters } from './lane.repository.js';

/** How long before its slot a lane's next send is prepared (JOBS_SEND_LEAD_MS, at least the 1 ms the clocks may disagree by). */
export const leadMsOf = (env: Pick<JobsEnv, 'JOBS_SEND_LEAD_MS'>): number => Math.max(1, env.JOBS_SEND_LEAD_MS);

/** One message about to go out: everything `finish` needs to record its outcome. */
export interface PlannedSend {
  userId: string;
  jobId: string;
  seq: number;
  phone: string;
  text: string;
  idempotencyKey: string;
  /** The job's attachment reference (sessions fetches its bytes once per job); null for text only. */
  media: MediaRef | null;
  /**
   * When it may leave, on this process's `performance.now()` clock: the lane's slot. The step is taken
   * up to JOBS_SEND_LEAD_MS before it, so the caller waits until then and sends on the slot itself.
   */
  dueAt: number;
  /** When the step that took it held the lane (`performance.now()`): a stop of the job heard after this came after the take. */
  takenAt: number;
  /** Failed tries so far (temporary failures only). */
  attempts: number;
  /** Found `sending`: a worker died while sending it; the key tells sessions to answer, not resend. */
  resumed: boolean;
  /** The job was paused because the account was unlinked. */
  wasUnlinked: boolean;
  /** The pause this send was paced with. */
  paceMs: number;
  /** The policy in force when the send was planned, and the lane's counters then (the lane is held: nobody else moves them). */
  policy: SendingPolicy;
  counters: LaneCounters;
  /**
   * What its take counted on the lane: the counters with it, and whether on their day it counts as a
   * message to a number that never replied. Undefined when it was counted by an earlier take (`resumed`).
   */
  counted: { counters: TakenCounters; unanswered: boolean } | undefined;
}

export type NextStep = (
  | { kind: 'lost'; published: OutboxRow[] }
  | { kind: 'idle'; published: OutboxRow[] }
  | { kind: 'wait'; waitMs: number; published: OutboxRow[] }
  | { kind: 'send'; send: PlannedSend; published: OutboxRow[] }
) & {
  /** Recipients this step skipped (opted out or not on WhatsApp since the job was created), for the metrics once committed. */
  skipped?: SkipReason[];
};

export type Finished = (
  { kind: 'lost'; published: OutboxRow[] } | { kind: 'wait'; waitMs: number; published: OutboxRow[] }
) & {
  /** With `thenNext`, when the lane was due again at once: its next step, taken in the same transaction. */
  next?: NextStep;
};
