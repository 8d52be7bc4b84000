import type { z } from '../common/schema.js';
import type {
  MediaGetRequestSchema,
  MediaHoldRequestSchema,
  MediaRef,
  MediaRegisterRequestSchema,
  MediaView,
} from './schemas.js';

export type MediaRegisterRequest = z.output<typeof MediaRegisterRequestSchema>;
export type MediaGetRequest = z.output<typeof MediaGetRequestSchema>;
export type MediaHoldRequest = z.output<typeof MediaHoldRequestSchema>;

/** The attachments' requests, answered by the jobs service (it owns their metadata). */
export interface MediaRequests {
  /** `created: false`: the user had stored the same bytes before; the new object is the caller's to delete. */
  'jobs.media.register': { request: MediaRegisterRequest; reply: { media: MediaView; created: boolean } };
  'jobs.media.get': { request: MediaGetRequest; reply: { media: MediaView; ref: MediaRef } };
  'jobs.media.hold': { request: MediaHoldRequest; reply: { media: MediaView | null } };
}
