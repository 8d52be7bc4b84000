import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { rows } from '@bns/service-kit';

/** Every statement on `jobs.workers` (liveness is judged on the database's clock). */
@Injectable()
export class WorkersRepository {
  async beat(em: EntityManager, workerId: string): Promise<void> {
    await rows(em, `INSERT INTO workers (id) VALUES ($1) ON CONFLICT (id) DO UPDATE SET seen_at = now()`, [workerId]);
  }

  /** Forgets this worker, and any silent for a day. */
  async forget(em: EntityManager, workerId: string): Promise<void> {
    await rows(em, `DELETE FROM workers WHERE id = $1 OR seen_at < now() - interval '1 day'`, [workerId]);
  }
}
