import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import type { SendingPolicy } from '@bns/contracts';
import { PolicyEntity } from './policy.entity.js';

const STORED = {
  preset: 'preset',
  delayMs: 'delay_ms',
  jitterMs: 'jitter_ms',
  pauseEvery: 'pause_every',
  pauseMs: 'pause_ms',
  dailyCap: 'daily_cap',
  window: 'send_window',
  timeZone: 'time_zone',
  warmUp: 'warm_up',
} as const satisfies Record<keyof SendingPolicy, string>;

/**
 * The stored policy's columns, from `jobs.policies` joined as `alias`, for a statement that reads the
 * policy along with something else (the lane step reads it with the lane's lock: one statement, not two).
 * Read the result with `storedPolicyOf`.
 */
export function policyColumnsSql(alias: string): string {
  return [`${alias}.user_id IS NOT NULL AS "policy_stored"`, ...Object.entries(STORED).map(([k, c]) => `${alias}.${c} AS "policy_${k}"`)].join(', ');
}

/** The policy `policyColumnsSql` read; undefined when the account never set one (it sends under `standard`). */
export function storedPolicyOf(row: Record<string, unknown>): SendingPolicy | undefined {
  if (row.policy_stored !== true) return undefined;
  return Object.fromEntries(Object.keys(STORED).map((k) => [k, row[`policy_${k}`]])) as unknown as SendingPolicy;
}

/** Every statement on `jobs.policies`. */
@Injectable()
export class PolicyRepository {
  /** The account's stored policy; undefined when it never set one (it sends under `standard`). */
  async get(em: EntityManager, userId: string): Promise<SendingPolicy | undefined> {
    const found = await em.getRepository(PolicyEntity).findOneBy({ userId });
    if (!found) return undefined;
    const { preset, delayMs, jitterMs, pauseEvery, pauseMs, dailyCap, window, timeZone, warmUp } = found;
    return { preset, delayMs, jitterMs, pauseEvery, pauseMs, dailyCap, window, timeZone, warmUp };
  }

  async save(em: EntityManager, userId: string, policy: SendingPolicy): Promise<void> {
    await em
      .createQueryBuilder()
      .insert()
      .into(PolicyEntity)
      .values({ userId, ...policy, window: policy.window as never, updatedAt: () => 'now()' })
      .orUpdate(['preset', 'delay_ms', 'jitter_ms', 'pause_every', 'pause_ms', 'daily_cap', 'send_window', 'time_zone', 'warm_up', 'updated_at'], ['user_id'])
      .updateEntity(false)
      .execute();
  }
}
