// The job-status fast path: answering job-status polls and revalidations as cheaply as they can be
// answered, and exactly as the plain route would (test/job-status-fast-path.integration-spec.ts).
export { HOT_ROUTES } from './hot-path-log.js';
export { installJobStatusFastPath } from './install.js';
export { JobIdCheck, jobNotFound } from './job-id-check.js';
export { JobStatusCache } from './job-status-cache.js';
export { JobStatusFastPathModule } from './job-status-fast-path.module.js';
export { JobStatusService } from './job-status.service.js';
