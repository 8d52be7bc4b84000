import { Inject, Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { applyPolicyUpdate, PolicyErrorCode, standardPolicy, type SendingPolicy } from '@bns/contracts';
import { AppError, SERVICE_ENV } from '@bns/service-kit';
import type { JobsEnv } from '../config/env.js';
import { PolicyRepository } from './policy.repository.js';

/** The account's sending policy: what is in force, and how an update is checked and stored. */
@Injectable()
export class Policies {
  constructor(
    private readonly policies: PolicyRepository,
    @Inject(SERVICE_ENV) private readonly env: JobsEnv,
  ) {}

  /** The spec's pace as this service is configured (SEND_DELAY_MS, SEND_JITTER_MS). */
  standard(): SendingPolicy {
    return standardPolicy(this.env.SEND_DELAY_MS, this.env.SEND_JITTER_MS);
  }

  /** The account's own policy, or `standard` when it never set one. */
  async of(em: EntityManager, userId: string): Promise<SendingPolicy> {
    return (await this.policies.get(em, userId)) ?? this.standard();
  }

  /** Applies a partial update; a refusal is a validation error naming the field. */
  async update(em: EntityManager, userId: string, update: unknown): Promise<SendingPolicy> {
    const current = await this.of(em, userId);
    const checked = applyPolicyUpdate(current, update, {
      minDelayMs: this.env.POLICY_MIN_DELAY_MS,
      standardBase: this.standard(),
    });
    if (!checked.ok)
      throw AppError.validation(PolicyErrorCode.InvalidPolicy, checked.message, { [checked.field]: checked.message });
    await this.policies.save(em, userId, checked.policy);
    return checked.policy;
  }
}
