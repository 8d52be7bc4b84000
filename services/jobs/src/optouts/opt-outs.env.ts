import type { JobsEnv } from '../config/env.js';

/** The variables the opt-outs feature reads (declared with the others in config/env.ts). */
export type OptOutsEnv = Pick<
  JobsEnv,
  'NOT_ON_WHATSAPP_MEMORY_DAYS' | 'OPT_OUTS_CONSUMER' | 'OPT_OUTS_ACK_WAIT_MS' | 'OPT_OUTS_MAX_DELIVER'
>;
