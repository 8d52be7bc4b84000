import { z } from '../common/schema.js';
import { JobAnswerSchema, JobRefSchema, JobViewSchema } from './schemas.js';

/**
 * Revalidation of `GET /job-status/{jobId}`: the jobs service gives each answer a version
 * that changes whenever anything in it can change; the gateway sends it as the ETag and forwards the
 * versions an `If-None-Match` names, so an unchanged job costs one indexed query and a 304, not its
 * lists. The ETag is weak: the version stands for what the job says, and a body read while a send was
 * being recorded may differ in bytes (a list a step ahead of the counts) under the same version.
 */

/**
 * What the version stands for besides the stored job: the answer's shape. Raise the number when the
 * answer changes for the same stored job (a field worded or computed differently, a list's order), so
 * every copy cached before the change is answered in full once; new fields change it by themselves.
 */
export const JOB_STATUS_SHAPE = `1:${Object.keys(JobAnswerSchema.shape).join(',')}:${Object.keys(JobViewSchema.shape).join(',')}:${Object.keys(JobViewSchema.shape.results.shape).join(',')}`;

export const JOB_STATUS_REVALIDATION = {
  /** A longer If-None-Match is ignored (answered as if absent): browsers send one tag of ~27 characters. */
  ifNoneMatchMaxLength: 1024,
  /** Versions forwarded to the jobs service from one header. */
  maxVersions: 8,
} as const;

/** A version: 128 bits of a digest, base64url. */
const VERSION = /^[A-Za-z0-9_-]{22}$/;

/** `*` (any current answer) or one of our versions. */
export const JobStatusVersionSchema = z.union([z.literal('*'), z.string().regex(VERSION)]);

/** `jobs.status`: `ifNoneMatch` holds the versions the client has; one of them still current is `{ notModified }`. */
export const JobStatusRequestSchema = JobRefSchema.extend({
  ifNoneMatch: z.array(JobStatusVersionSchema).min(1).max(JOB_STATUS_REVALIDATION.maxVersions).optional(),
});
export type JobStatusRequest = z.output<typeof JobStatusRequestSchema>;

/**
 * The whole job with its version, or only the version when the client's copy is current. The job is
 * its JSON text (a `JobView`), passed on by the gateway as it is: its lists are not parsed and written
 * again on the way.
 */
export type JobStatusReply = { jobJson: string; version: string } | { notModified: true; version: string };

/** `GET /job-status/{jobId}`'s Cache-Control: a browser may keep a copy, and revalidates it on every use. */
export const JOB_STATUS_CACHE_CONTROL = 'private, no-cache';

/** The ETag of an answer with this version. */
export function jobStatusEtag(version: string): string {
  return `W/"${version}"`;
}

/** One entity-tag (RFC 9110 §8.8.3: `[W/] DQUOTE *etagc DQUOTE`) and the comma or end after it. */
const ENTITY_TAG = /[ \t]*(?:W\/)?"([\x21\x23-\x7e\x80-\xff]*)"[ \t]*(,|$)/y;

/**
 * The versions an `If-None-Match` header names (weak comparison: `W/` or not), `['*']` for `*`, or
 * undefined when there is none of ours: absent, empty, too long or malformed headers are ignored, as
 * if absent, so the answer is the whole job; tags that are not ours (an Express body hash a browser
 * cached from a gateway that did not version job-status) are skipped.
 */
export function ifNoneMatchVersions(header: unknown): string[] | undefined {
  if (typeof header !== 'string' || header.length > JOB_STATUS_REVALIDATION.ifNoneMatchMaxLength) return undefined;
  if (header.trim() === '*') return ['*'];
  const versions = new Set<string>();
  ENTITY_TAG.lastIndex = 0;
  while (ENTITY_TAG.lastIndex < header.length) {
    const tag = ENTITY_TAG.exec(header);
    if (!tag) return undefined;
    if (VERSION.test(tag[1]!)) versions.add(tag[1]!);
    if (tag[2] === '') break;
  }
  return versions.size === 0 ? undefined : [...versions].slice(0, JOB_STATUS_REVALIDATION.maxVersions);
}
