import { env } from '@bns/service-kit';

/** The /v1 API's variables (spread into GATEWAY_ENV). */
export const V1_ENV = {
  V1_RATE_LIMIT_QUOTA: env.int(
    'requests one API key may make per V1_RATE_LIMIT_WINDOW_S on one gateway replica (RateLimit-Policy q); past it 429 with Retry-After',
    600,
    { min: 1 },
  ),
  V1_RATE_LIMIT_WINDOW_S: env.int(
    'the window of V1_RATE_LIMIT_QUOTA, seconds (RateLimit-Policy w); the quota refills evenly over it',
    60,
    { min: 1, max: 86_400 },
  ),
  V1_BODY_LIMIT: env.str('largest JSON body of a /v1 call (POST /v1/campaigns takes START_BODY_LIMIT)', '1mb'),
};
