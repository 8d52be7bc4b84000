import { describe, expect, it } from '@jest/globals';
import { ifNoneMatchVersions, JobStatusVersionSchema, JobViewSchema, jobStatusEtag } from '@bns/contracts';
import { jobHeadOf, jobJsonOf, jobStatusVersion } from '../job-view.js';
import type { JobSummary } from '../../store/jobs.repository.js';

const at = (iso: string) => new Date(iso);
const running: JobSummary = {
  id: '3f1c9a52-8a4e-4d0e-9c1b-4f1b2a7d9e10',
  status: 'running',
  total: 10,
  sent: 3,
  failed: 1,
  skipped: 0,
  error: null,
  estimatedMinutes: 1,
  createdAt: at('2026-01-05T01:00:00.000Z'),
  startedAt: at('2026-01-05T01:00:01.000Z'),
  finishedAt: null,
  startAt: null,
  pausedReason: null,
  resumesAt: null,
  estimatedFinishAt: at('2026-01-05T01:01:00.000Z'),
  nextSendAt: at('2026-01-05T01:00:20.000Z'),
  attachment: null,
};
const USER = 'user_1';
const version = (job: JobSummary, user = USER, listMax = 2000) => jobStatusVersion(user, jobHeadOf(job), listMax);

/** One change to each thing the answer's head shows. */
const CHANGES: Record<string, Partial<JobSummary>> = {
  status: { status: 'paused' },
  total: { total: 11 },
  sent: { sent: 4 },
  failed: { failed: 2 },
  skipped: { skipped: 1 },
  error: { error: 'The account stayed unlinked' },
  estimatedMinutes: { estimatedMinutes: 2 },
  createdAt: { createdAt: at('2026-01-05T01:00:00.001Z') },
  startedAt: { startedAt: null },
  finishedAt: { finishedAt: at('2026-01-05T01:02:00.000Z') },
  startAt: { startAt: at('2026-01-06T01:00:00.000Z') },
  pausedReason: { pausedReason: 'unlinked' },
  resumesAt: { resumesAt: at('2026-01-05T02:00:00.000Z') },
  estimatedFinishAt: { estimatedFinishAt: null },
  nextSendAt: { nextSendAt: at('2026-01-05T01:00:24.000Z') },
  attachment: { attachment: { mediaId: 'med_poster', kind: 'image', fileName: 'poster.png', size: 1024 } },
};

describe('job-status version', () => {
  it('is the same for the same job as stored, and a valid ETag the gateway reads back', () => {
    const v = version(running);
    expect(version({ ...running })).toBe(v);
    expect(JobStatusVersionSchema.safeParse(v).success).toBe(true);
    expect(ifNoneMatchVersions(jobStatusEtag(v))).toEqual([v]);
  });

  it('changes with every field of the head, the counts that stand for the lists among them', () => {
    // A job with an attachment shows every field of the answer but the lists in its head (a text-only
    // one leaves `attachment` out), so every one is in the version.
    const head = jobHeadOf({ ...running, ...CHANGES.attachment });
    expect(Object.keys(head).sort()).toEqual(
      Object.keys(JobViewSchema.shape)
        .filter((k) => k !== 'results')
        .sort(),
    );
    const seen = new Set([version(running)]);
    for (const [field, change] of Object.entries(CHANGES)) {
      const v = version({ ...running, ...change });
      expect([field, seen.has(v)]).toEqual([field, false]);
      seen.add(v);
    }
  });

  it('does not change with what the answer cannot show: below a millisecond, or a state it returns to', () => {
    expect(version({ ...running, nextSendAt: new Date(running.nextSendAt!.getTime() + 0.4) })).toBe(version(running));
    const paused = { ...running, status: 'paused' as const, pausedReason: 'user' as const };
    expect(version(paused)).not.toBe(version(running));
    expect(version({ ...paused, status: 'running', pausedReason: null })).toBe(version(running));
  });

  it('differs between jobs, users and list lengths', () => {
    const v = version(running);
    expect(version({ ...running, id: '3f1c9a52-8a4e-4d0e-9c1b-4f1b2a7d9e11' })).not.toBe(v);
    expect(version(running, 'user_2')).not.toBe(v);
    expect(version(running, USER, 100)).not.toBe(v);
  });

  it('builds the answer in the order it has always had, lists after the counts', () => {
    const json = jobJsonOf(jobHeadOf(running), '{"skippedList":[],"successList":[],"failedList":[]}');
    const view = JSON.parse(json) as Record<string, unknown>;
    expect(Object.keys(view).slice(0, 5)).toEqual(['jobId', 'status', 'progress', 'results', 'error']);
    expect(JSON.stringify(view)).toBe(json);
    expect(JobViewSchema.safeParse(view).success).toBe(true);
  });
});
