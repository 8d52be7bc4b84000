import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { CAPPED_JOB_STATUSES, type SendingPolicy, type SkipReason } from '@bns/contracts';
import { row } from '@bns/service-kit';
import { POLICY_COLUMNS, POLICY_KEYS, storedPolicyOf } from '../policy/policy.repository.js';
import { phonesParam, suppressedAmongSql } from '../queue/lane-step.repository.js';
import { LANE_COLUMNS, LANE_COUNTER_KEYS, type LaneCounters } from '../queue/lane.repository.js';
import { selectList } from '../store/columns.js';
import type { JobEntity } from '../store/job.entity.js';
import { countAheadSql, JOB_COLUMNS } from '../store/jobs.repository.js';
import type { JobStartEntity } from './job-start.entity.js';

/** What a replayed start answers with, from the job its key made. */
const STARTED_JOB_KEYS = ['id', 'status', 'total', 'estimatedMinutes', 'estimatedFinishAt'] as const;
export type StartedJob = Pick<JobEntity, (typeof STARTED_JOB_KEYS)[number]> & Pick<JobStartEntity, 'requestHash'>;
const STARTED_JOB = selectList(JOB_COLUMNS, STARTED_JOB_KEYS, 'j');

const CAPPED = `(${CAPPED_JOB_STATUSES.map((s) => `'${s}'`).join(', ')})`;

/** What a start reads once its user's lane is locked, in one round trip (`AdmissionRepository.admit`). */
export interface AdmissionReads {
  /** The idempotency key was claimed for the new job (always, for a start without one). */
  claimed: boolean;
  /** The user's work in flight, for the caps: active jobs and recipients not yet done in them. */
  inFlight: { jobs: number; recipients: number };
  /** Jobs the new one waits behind. */
  ahead: number;
  /** The account's stored sending policy; undefined when it never set one. */
  policy: SendingPolicy | undefined;
  /** The lane's counters, for the estimate; undefined without a lane. */
  counters: LaneCounters | undefined;
  /** The recipients the account must not send to, and why (opted out wins over not on WhatsApp). */
  suppressed: Map<string, SkipReason>;
}

export interface AdmissionClaim {
  userId: string;
  jobId: string;
  /** The start's Idempotency-Key and the hash of its body; null without a key. */
  key: string | null;
  requestHash: string | null;
  phones: readonly string[];
  notOnWhatsAppDays: number;
}

/**
 * A start's admission, one statement: the key claimed (a start holding it makes this wait for that one
 * to end) and everything the start reads under its lane's lock. The user's lane must be locked by the
 * caller's transaction first, so two starts of one user never both pass the caps.
 */
const ADMIT_SQL = `WITH claim AS (
    INSERT INTO job_starts (user_id, idempotency_key, request_hash, job_id)
    SELECT $1, $2, $3, $4 WHERE $2::text IS NOT NULL
    ON CONFLICT (user_id, idempotency_key) DO NOTHING RETURNING 1
  )
  SELECT ($2::text IS NULL OR EXISTS (SELECT 1 FROM claim)) AS claimed, c.jobs, c.recipients, ${countAheadSql('$1')} AS ahead,
         p.user_id IS NOT NULL AS "policy_stored", ${selectList(POLICY_COLUMNS, POLICY_KEYS, 'p', 'policy_')},
         l.user_id IS NOT NULL AS "laneFound", ${selectList(LANE_COLUMNS, LANE_COUNTER_KEYS, 'l', 'lane_')},
         (SELECT coalesce(json_agg(json_build_array(s.phone, s.reason)), '[]') FROM (${suppressedAmongSql('$1', '$5', '$6')}) s) AS suppressed
    FROM (SELECT count(*)::int AS jobs, coalesce(sum(total - sent - failed), 0)::int AS recipients
            FROM jobs WHERE user_id = $1 AND status IN ${CAPPED}) c
    LEFT JOIN policies p ON p.user_id = $1
    LEFT JOIN lanes l ON l.user_id = $1`;

/** Every statement of a job's admission: its idempotency key (`jobs.job_starts`) and the per-user caps. */
@Injectable()
export class AdmissionRepository {
  /** The job a key already made, with the hash of the body it came with. */
  findStart(em: EntityManager, userId: string, key: string): Promise<StartedJob | undefined> {
    return row<StartedJob>(
      em,
      `SELECT ${STARTED_JOB}, s.request_hash AS "requestHash"
         FROM job_starts s JOIN jobs j ON j.id = s.job_id
        WHERE s.user_id = $1 AND s.idempotency_key = $2`,
      [userId, key],
    );
  }

  /** Claims the start's key and reads what its admission needs (`ADMIT_SQL`), under the lane's lock. */
  async admit(em: EntityManager, claim: AdmissionClaim): Promise<AdmissionReads> {
    const found = (await row<Record<string, unknown>>(em, ADMIT_SQL, [
      claim.userId,
      claim.key,
      claim.requestHash,
      claim.jobId,
      phonesParam(claim.phones),
      claim.notOnWhatsAppDays,
    ]))!;
    return {
      claimed: found.claimed === true,
      inFlight: { jobs: found.jobs as number, recipients: found.recipients as number },
      ahead: found.ahead as number,
      policy: storedPolicyOf(found, 'policy_'),
      counters:
        found.laneFound === true
          ? (Object.fromEntries(LANE_COUNTER_KEYS.map((k) => [k, found[`lane_${k}`]])) as unknown as LaneCounters)
          : undefined,
      suppressed: new Map(found.suppressed as [string, SkipReason][]),
    };
  }
}
