import type { Server } from 'socket.io';
import { counter, gauge } from '@bns/service-kit';
import type { LoadShedder } from '../http/load-shedding.js';

/**
 * The gateway's socket metrics (its HTTP metrics come from service-kit's middleware, by route
 * template). Labels are event names, never a user or a room.
 */
const eventsSent = counter({
  name: 'bns_gateway_socket_events_sent_total',
  help: "Events pushed to users' socket rooms on this replica (those of users with a socket here), by socket event name",
  labelNames: ['event'],
});

/** Hook: the socket.io server exists; its connected sockets are counted on scrape. */
export function trackSockets(server: Server): void {
  gauge({
    name: 'bns_gateway_sockets_connected',
    help: 'socket.io clients connected to this replica',
    collect() {
      this.set(server.engine?.clientsCount ?? 0);
    },
  });
}

/** Hook: one event was emitted to the room of a user with a socket on this replica. */
export function countSocketEvent(event: string): void {
  eventsSent.inc({ event: /^[\w:.-]{1,48}$/.test(event) ? event : 'other' });
}

const jobStatusRevalidations = counter({
  name: 'bns_gateway_job_status_revalidations_total',
  help: "job-status polls with If-None-Match, by who answered: memory (a 304 from this replica's cache) or jobs (the jobs service)",
  labelNames: ['answered_by'],
});

/** Hook: a job-status revalidation was answered from this replica's memory or by the jobs service. */
export function countRevalidation(answeredBy: 'memory' | 'jobs'): void {
  jobStatusRevalidations.inc({ answered_by: answeredBy });
}

const jobStatusAnswers = counter({
  name: 'bns_gateway_job_status_answers_total',
  help: "job-status polls answered with the whole answer (a 200), by where it came from: memory (the answer this replica kept for the job's current version) or jobs (the jobs service)",
  labelNames: ['answered_by'],
});

/** Hook: a job-status poll got its whole answer, from this replica's memory or from the jobs service. */
export function countJobStatusAnswer(answeredBy: 'memory' | 'jobs'): void {
  jobStatusAnswers.inc({ answered_by: answeredBy });
}

const jobIdsRefused = counter({
  name: 'bns_gateway_job_ids_refused_total',
  help: 'Requests naming a job id answered "not found" from the id alone (no such job of the caller), without asking the jobs service',
});

/** Hook: a request's job id named no job of its user, and was answered 404 by the gateway. */
export function countJobIdRefused(): void {
  jobIdsRefused.inc();
}

/** Hook: the HTTP load shedder exists; its adaptive limit and what is in progress are read on scrape. */
export function trackShedding(shedder: LoadShedder): void {
  gauge({
    name: 'bns_gateway_shed_read_limit',
    help: 'HTTP requests in progress past which a new read (GET, HEAD) gets 503 on this replica now (adaptive, between SHED_READS_MIN_IN_FLIGHT and SHED_READS_MAX_IN_FLIGHT; writes wait up to SHED_MAX_IN_FLIGHT)',
    collect() {
      this.set(shedder.current.readLimit);
    },
  });
  gauge({
    name: 'bns_gateway_requests_in_flight',
    help: 'HTTP requests in progress on this replica (health probes and 304s answered from memory not counted)',
    collect() {
      this.set(shedder.current.inFlight);
    },
  });
}

const rateLimitStoreUp = gauge({
  name: 'bns_gateway_rate_limit_store_up',
  help: "Whether the per-user rate limit's shared store (NATS KV) answers on this replica (0: it limits on its own buckets until a background retry finds the store back)",
});
const localRateDecisions = counter({
  name: 'bns_gateway_rate_limit_local_decisions_total',
  help: 'Requests whose rate limit this replica decided on its own bucket because the shared store (NATS KV) did not answer',
});

/** Hook: the rate limit's shared store answers again (true) or not (false). */
export function setRateLimitStoreUp(up: boolean): void {
  rateLimitStoreUp.set(up ? 1 : 0);
}

/** Hook: one request's rate limit was decided locally, the shared store being away. */
export function countLocalRateDecision(): void {
  localRateDecisions.inc();
}
