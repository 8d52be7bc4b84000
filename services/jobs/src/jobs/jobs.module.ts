import { Module, type OnModuleInit } from '@nestjs/common';
import { accountDataProviders, OutboxPublisher, OutboxRepository, UserDeletionsModule } from '@bns/service-kit';
import { JobsAccountData } from '../account/jobs-account-data.js';
import { JobJournals, JournalWriter } from '../events/job-journal.js';
import { countPublished } from '../metrics/jobs.metrics.js';
import { OptOutsModule } from '../optouts/opt-outs.module.js';
import { OptOutsRepository } from '../optouts/opt-outs.repository.js';
import { LANE_QUEUE_PROVIDERS } from '../queue/lane-queue.js';
import { LaneRepository } from '../queue/lane.repository.js';
import { LaneStepRepository } from '../queue/lane-step.repository.js';
import { LaneWorker } from '../queue/lane-worker.js';
import { WorkersRepository } from '../queue/workers.repository.js';
import { JobIdSchemeRepository } from '../store/job-id-scheme.repository.js';
import { JobIds } from '../store/job-ids.js';
import { JobLogsRepository } from '../events/job-logs.repository.js';
import { JobsHandler } from './jobs.handler.js';
import { SendsTodayService } from './sends-today.service.js';
import { JobsRepository } from '../store/jobs.repository.js';
import { JobsService } from './jobs.service.js';
import { PolicyRepository } from '../policy/policy.repository.js';
import { Policies } from '../policy/policy.service.js';
import { RecipientsRepository } from '../store/recipients.repository.js';
import { ResultsModule } from '../results/results.module.js';
import { AdmissionRepository } from '../admission/admission.repository.js';
import { JobStarts } from '../admission/job-starts.service.js';
import { StartGuard } from '../admission/start-guard.js';
import { MediaModule } from '../media/media.module.js';
import { RetentionModule } from '../retention/retention.module.js';

/** The repositories: every SQL statement of the jobs schema (the opt-outs one serves the start and the lane step too). */
export const JOBS_REPOSITORIES = [
  JobsRepository,
  RecipientsRepository,
  JobLogsRepository,
  LaneRepository,
  LaneStepRepository,
  WorkersRepository,
  OutboxRepository,
  PolicyRepository,
  OptOutsRepository,
  JobIdSchemeRepository,
  AdmissionRepository,
];

@Module({
  // Campaign results and opt-outs: their calls and their event consumers (results also owns the outbox publisher).
  imports: [ResultsModule, OptOutsModule, UserDeletionsModule, MediaModule, RetentionModule],
  controllers: [JobsHandler],
  providers: [
    ...JOBS_REPOSITORIES,
    JobIds,
    Policies,
    SendsTodayService,
    JournalWriter,
    JobJournals,
    JobsService,
    StartGuard,
    JobStarts,
    ...LANE_QUEUE_PROVIDERS,
    LaneWorker,
    ...accountDataProviders('jobs', JobsAccountData),
  ],
})
export class JobsModule implements OnModuleInit {
  constructor(private readonly outbox: OutboxPublisher) {}

  /** The sent/failed and finished-job counters follow what the outbox publishes after each commit. */
  onModuleInit(): void {
    this.outbox.observe(countPublished);
  }
}
