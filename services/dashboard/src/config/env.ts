import type { EnvVar } from '@bns/service-kit';

/** The dashboard service's own variables (beyond the common and database ones of service-kit). */
export const DASHBOARD_ENV: Record<string, EnvVar<unknown>> = {};
