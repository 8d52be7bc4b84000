import { Retention1798100000000 } from './migrations/1798100000000-retention.js';
import { OutboxEntity } from '@bns/service-kit';
import { JobIdSchemeEntity } from '../store/job-id-scheme.entity.js';
import { JobLogEntity } from '../events/job-log.entity.js';
import { JobRecipientEntity } from '../store/job-recipient.entity.js';
import { JobEntity } from '../store/job.entity.js';
import { PolicyEntity } from '../policy/policy.entity.js';
import { OPT_OUT_ENTITIES } from '../optouts/entities.js';
import { LaneEntity } from '../queue/lane.entity.js';
import { WorkerEntity } from '../queue/worker.entity.js';
import { CreateJobs1763769600000 } from './migrations/1763769600000-create-jobs.js';
import { SendingPolicy1764547200000 } from './migrations/1764547200000-sending-policy.js';
import { CampaignResults1764000000000 } from './migrations/1764000000000-campaign-results.js';
import { CreateOptOuts1795900000000 } from './migrations/1795900000000-create-opt-outs.js';
import { LanePacedSlot1796000000000 } from './migrations/1796000000000-lane-paced-slot.js';
import { LaneHotUpdates1796100000000 } from './migrations/1796100000000-lane-hot-updates.js';
import { RecipientInFlight1796200000000 } from './migrations/1796200000000-recipient-in-flight.js';
import { JobIdScheme1796500000000 } from './migrations/1796500000000-job-id-scheme.js';
import { ReceiptsOnRecipients1796400000000 } from './migrations/1796400000000-receipts-on-recipients.js';
import { TransactionalJobs1797100000000 } from './migrations/1797100000000-transactional-jobs.js';
import { RefusedSends1797200000000 } from './migrations/1797200000000-refused-sends.js';
import { RESULTS_ENTITIES } from '../results/results.entities.js';
import { JobStartEntity } from '../admission/job-start.entity.js';
import { MEDIA_ENTITIES } from '../media/media.entity.js';
import { Media1797800000000 } from './migrations/1797800000000-media.js';
import { CascadeByStatement1798050000000 } from './migrations/1798050000000-cascade-by-statement.js';
import { RecipientReplies1798300000000 } from './migrations/1798300000000-recipient-replies.js';
import { UnansweredBudget1798400000000 } from './migrations/1798400000000-unanswered-budget.js';
import { VariablesOnRecipients1798500000000 } from './migrations/1798500000000-variables-on-recipients.js';
import { LogLinesByStatement1798600000000 } from './migrations/1798600000000-log-lines-by-statement.js';
import { LaneInFlight1798900000000 } from './migrations/1798900000000-lane-in-flight.js';
import { SentLinesFromRecipients1799000000000 } from './migrations/1799000000000-sent-lines-from-recipients.js';

/** The `jobs` schema: one entity per table, and the migrations that make them. */
export const JOBS_SCHEMA = 'jobs';
export const JOBS_ENTITIES = [
  JobEntity,
  JobRecipientEntity,
  JobLogEntity,
  LaneEntity,
  WorkerEntity,
  OutboxEntity,
  PolicyEntity,
  JobIdSchemeEntity,
  JobStartEntity,
  ...RESULTS_ENTITIES,
  ...OPT_OUT_ENTITIES,
  ...MEDIA_ENTITIES,
];
export const JOBS_MIGRATIONS = [
  CreateJobs1763769600000,
  CampaignResults1764000000000,
  SendingPolicy1764547200000,
  CreateOptOuts1795900000000,
  LanePacedSlot1796000000000,
  LaneHotUpdates1796100000000,
  RecipientInFlight1796200000000,
  ReceiptsOnRecipients1796400000000,
  JobIdScheme1796500000000,
  TransactionalJobs1797100000000,
  RefusedSends1797200000000,
  Media1797800000000,
  CascadeByStatement1798050000000,
  Retention1798100000000,
  RecipientReplies1798300000000,
  UnansweredBudget1798400000000,
  VariablesOnRecipients1798500000000,
  LogLinesByStatement1798600000000,
  LaneInFlight1798900000000,
  SentLinesFromRecipients1799000000000,
];
