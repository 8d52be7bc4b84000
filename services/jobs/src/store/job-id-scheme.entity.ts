import { Column, Entity, PrimaryColumn } from 'typeorm';

/** `jobs.job_id_scheme`: one row, the MAC key job ids are made with (service-kit `JobIdScheme`). */
@Entity({ name: 'job_id_scheme' })
export class JobIdSchemeEntity {
  @PrimaryColumn({ type: 'smallint' })
  id!: number;

  @Column({ type: 'bytea' })
  key!: Buffer;

  @Column({ name: 'legacy_ids', type: 'boolean' })
  legacyIds!: boolean;
}
