import { Column, Entity, PrimaryColumn } from 'typeorm';

/** `sessions.sim_auth`: the simulated engine's login per user, sealed under SESSION_STATE_KEY. */
@Entity({ name: 'sim_auth' })
export class SimAuthEntity {
  @PrimaryColumn({ name: 'user_id', type: 'text' })
  userId!: string;

  @Column({ type: 'bytea' })
  data!: Buffer;

  @Column({ name: 'saved_at', type: 'timestamptz', default: () => 'now()' })
  savedAt!: Date;
}
