import type { EnvVar } from '@bns/service-kit';

/** The jobs service's own variables (beyond the common and database ones of service-kit). */
export const JOBS_ENV: Record<string, EnvVar<unknown>> = {};
