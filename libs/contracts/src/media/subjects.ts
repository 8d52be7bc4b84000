/**
 * Wire names of attachments. Do not rename: stored objects and running services use them.
 * The NATS requests are in rpc.ts (`jobs.media.*`); the bytes never cross a NATS request: they are in
 * this JetStream object store bucket, one object per stored file.
 */
export const MEDIA_BUCKET = 'media';

/** The name of a media item's object in MEDIA_BUCKET: its id (one object per user and content). */
export function mediaObjectName(mediaId: string): string {
  return mediaId;
}

/** The multipart field an upload's file comes in (`POST /api/media`, `POST /v1/media`). */
export const MEDIA_UPLOAD_FIELD = 'file';
