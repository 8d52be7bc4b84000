import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import type { SendingPolicy } from '@bns/contracts';
import type { ColumnMap } from '../store/columns.js';
import { PolicyEntity } from './policy.entity.js';

/** The column map of `jobs.policies`: the policy's fields (the entity adds only the user and the update time). */
export const POLICY_COLUMNS = {
  preset: 'preset',
  delayMs: 'delay_ms',
  jitterMs: 'jitter_ms',
  pauseEvery: 'pause_every',
  pauseMs: 'pause_ms',
  dailyCap: 'daily_cap',
  window: 'send_window',
  timeZone: 'time_zone',
  warmUp: 'warm_up',
  unansweredLimit: 'unanswered_limit',
} as const satisfies ColumnMap<SendingPolicy>;
/** The policy's fields, in the map's order. */
export const POLICY_KEYS = Object.keys(POLICY_COLUMNS) as (keyof SendingPolicy)[];

/**
 * The policy a statement read with `selectList(POLICY_COLUMNS, POLICY_KEYS, alias, prefix)` beside
 * `<alias>.user_id IS NOT NULL AS "<prefix>stored"`; undefined when the account never set one.
 */
export function storedPolicyOf(found: Record<string, unknown>, prefix: string): SendingPolicy | undefined {
  if (found[`${prefix}stored`] !== true) return undefined;
  return Object.fromEntries(POLICY_KEYS.map((k) => [k, found[`${prefix}${k}`]])) as unknown as SendingPolicy;
}

/** Every statement on `jobs.policies`. */
@Injectable()
export class PolicyRepository {
  /** The account's stored policy; undefined when it never set one (it sends under `standard`). */
  async get(em: EntityManager, userId: string): Promise<SendingPolicy | undefined> {
    const found = await em.getRepository(PolicyEntity).findOneBy({ userId });
    if (!found) return undefined;
    return Object.fromEntries(POLICY_KEYS.map((k) => [k, found[k]])) as unknown as SendingPolicy;
  }

  async save(em: EntityManager, userId: string, policy: SendingPolicy): Promise<void> {
    await em
      .createQueryBuilder()
      .insert()
      .into(PolicyEntity)
      .values({ userId, ...policy, window: policy.window as never, updatedAt: () => 'now()' })
      .orUpdate([...Object.values(POLICY_COLUMNS), 'updated_at'], ['user_id'])
      .updateEntity(false)
      .execute();
  }
}
