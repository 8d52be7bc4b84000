import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import type { SendingPolicy } from '@bns/contracts';
import { PolicyEntity } from './policy.entity.js';

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
