import { EventEnvelopeSchema, JOB_LOG_TYPES } from '../common/events.js';
import { z } from '../common/schema.js';
import { JOB_STATUSES } from './types.js';

/** The jobs service's events (subjects `events.job.*`; the registry's EVENT_SCHEMAS ties each to its subject). */
export const JobProgressEventSchema = EventEnvelopeSchema.extend({
  jobId: z.string(),
  status: z.enum(JOB_STATUSES),
  progress: z.object({ total: z.int(), sent: z.int(), failed: z.int(), skipped: z.int().optional() }),
  nextSendAt: z.string().nullable().optional(),
});
export type JobProgressEvent = z.output<typeof JobProgressEventSchema>;

export const JobLogEventSchema = EventEnvelopeSchema.extend({
  jobId: z.string(),
  type: z.enum(JOB_LOG_TYPES),
  message: z.string(),
  timestamp: z.string(),
});
export type JobLogEvent = z.output<typeof JobLogEventSchema>;
