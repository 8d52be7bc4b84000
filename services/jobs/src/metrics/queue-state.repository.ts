import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { OUTBOX_EVENTS_SQL, row, rows } from '@bns/service-kit';

/** What /metrics shows of the queue, across every replica. */
export interface QueueState {
  pending: number;
  lanesActive: number;
  lanesHeld: number;
  outbox: number;
  outboxAgeSeconds: number;
  jobs: Array<{ status: string; n: number }>;
}

/** The statements behind the jobs gauges, read on scrape (never on the send path). */
@Injectable()
export class QueueStateRepository {
  async read(em: EntityManager): Promise<QueueState> {
    const [pending, lanes, outbox, jobs] = await Promise.all([
      row<{ n: number }>(em, `SELECT count(*)::int AS n FROM job_recipients WHERE state IN ('pending', 'sending')`),
      row<{ active: number; held: number }>(
        em,
        `SELECT count(*) FILTER (WHERE active)::int AS active, count(*) FILTER (WHERE active AND holder IS NOT NULL)::int AS held FROM lanes`,
      ),
      row<{ n: number; age: number }>(
        em,
        `SELECT ${OUTBOX_EVENTS_SQL} AS n, COALESCE(EXTRACT(EPOCH FROM now() - min(created_at)), 0)::float8 AS age FROM outbox`,
      ),
      rows<{ status: string; n: number }>(em, `SELECT status, count(*)::int AS n FROM jobs GROUP BY status`),
    ]);
    return {
      pending: pending!.n,
      lanesActive: lanes!.active,
      lanesHeld: lanes!.held,
      outbox: outbox!.n,
      outboxAgeSeconds: outbox!.age,
      jobs,
    };
  }
}
