import { Column, Entity, PrimaryColumn } from 'typeorm';
import type { PolicyPreset, SendingWindow } from '@bns/contracts';

/** `jobs.policies`: an account's sending policy; an account without a row sends under `standard`. */
@Entity({ name: 'policies' })
export class PolicyEntity {
  @PrimaryColumn({ name: 'user_id', type: 'text' })
  userId!: string;

  @Column({ type: 'text' })
  preset!: PolicyPreset;

  @Column({ name: 'delay_ms', type: 'integer' })
  delayMs!: number;

  @Column({ name: 'jitter_ms', type: 'integer' })
  jitterMs!: number;

  @Column({ name: 'pause_every', type: 'integer', nullable: true })
  pauseEvery!: number | null;

  @Column({ name: 'pause_ms', type: 'integer', nullable: true })
  pauseMs!: number | null;

  @Column({ name: 'daily_cap', type: 'integer', nullable: true })
  dailyCap!: number | null;

  @Column({ name: 'send_window', type: 'jsonb', nullable: true })
  window!: SendingWindow | null;

  @Column({ name: 'time_zone', type: 'text' })
  timeZone!: string;

  @Column({ name: 'warm_up', type: 'boolean', default: false })
  warmUp!: boolean;

  @Column({ name: 'unanswered_limit', type: 'integer', nullable: true })
  unansweredLimit!: number | null;

  @Column({ name: 'updated_at', type: 'timestamptz' })
  updatedAt!: Date;
}
