import { MEDIA_LIMITS } from '@bns/contracts';
import { env } from '@bns/service-kit';

/** The attachments' object store, as the gateway creates it. */
export const MEDIA_ENV = {
  MEDIA_BUCKET_MAX_BYTES: env.int(
    'size cap of the JetStream object store bucket `media` that keeps attachments (bytes); when it is full an upload is refused with 413 until the retention clean-up frees room',
    MEDIA_LIMITS.defaultBucketMaxBytes,
    { min: MEDIA_LIMITS.maxUploadBytes },
  ),
};
