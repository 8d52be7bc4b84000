import { JobReceiptsEntity } from './job-receipts.entity.js';
import { RecipientReplyEntity } from './recipient-reply.entity.js';
import { ReplierEntity } from './replier.entity.js';

/** The tables of campaign results, registered in the jobs data source. */
export const RESULTS_ENTITIES = [JobReceiptsEntity, RecipientReplyEntity, ReplierEntity];
