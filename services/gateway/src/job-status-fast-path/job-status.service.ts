import { Injectable } from '@nestjs/common';
import type { ServerResponse } from 'node:http';
import type { Response } from 'express';
import { ErrorKind, ifNoneMatchVersions, JobsErrorCode, jobStatusEtag } from '@bns/contracts';
import { AppError, RpcClient } from '@bns/service-kit';
import { countJobStatusAnswer, countRevalidation } from '../metrics/gateway.metrics.js';
import { JobIdCheck, jobNotFound } from './job-id-check.js';
import { JobStatusCache } from './job-status-cache.js';

/**
 * The job-status route's answer (`GET /job-status/{jobId}`), for what the front door passed on: the
 * jobs service versions the answer, and an If-None-Match naming the current version is a 304 — from
 * this replica's memory while nothing of the user was heard since (JobStatusCache), else after one
 * indexed read there, without the lists crossing NATS. FrontDoor answers the same requests the same
 * way when it can (the parity test, job-status-fast-path.integration-spec.ts, holds them to it).
 */
@Injectable()
export class JobStatusService {
  constructor(
    private readonly rpc: RpcClient,
    private readonly statusCache: JobStatusCache,
    private readonly ids: JobIdCheck,
  ) {}

  /** Writes the answer on `res` (the route's Cache-Control header is already set by its decorator). */
  async answer(userId: string, jobId: string, ifNoneMatch: unknown, res: Response): Promise<void> {
    // An id that names no job of this user, or a job the jobs service lately said they do not have: the same 404, from here.
    this.ids.check(userId, jobId);
    if (this.statusCache.missing(userId, jobId)) throw jobNotFound();
    const versions = ifNoneMatchVersions(ifNoneMatch);
    if (versions) {
      const known = this.statusCache.version(userId, jobId);
      if (known !== undefined && versions.some((v) => v === '*' || v === known)) {
        countRevalidation('memory');
        res.setHeader('ETag', jobStatusEtag(known));
        res.status(304).end();
        return;
      }
    }
    const kept = this.statusCache.answer(userId, jobId);
    if (kept) {
      countJobStatusAnswer('memory');
      sendWholeAnswer(res, kept.version, kept.body);
      return;
    }
    if (versions) countRevalidation('jobs');
    const ticket = this.statusCache.ticket(userId);
    const answer = await this.rpc
      .call('jobs.status', { userId, jobId, ...(versions ? { ifNoneMatch: versions } : {}) })
      .catch((err: unknown) => {
        if (err instanceof AppError && err.kind === ErrorKind.NotFound && err.code === JobsErrorCode.NotFound)
          this.statusCache.rememberMissing(userId, jobId, ticket);
        throw err;
      });
    if ('notModified' in answer) {
      this.statusCache.remember(userId, jobId, answer.version, ticket);
      res.setHeader('ETag', jobStatusEtag(answer.version));
      res.status(304).end();
      return;
    }
    const body = wholeAnswerOf(answer.jobJson);
    this.statusCache.remember(userId, jobId, answer.version, ticket, body);
    countJobStatusAnswer('jobs');
    sendWholeAnswer(res, answer.version, body);
  }
}

/** The 200's body around the job's JSON text as the jobs service wrote it. */
export const wholeAnswerOf = (jobJson: string): Buffer => Buffer.from(`{"success":true,"job":${jobJson}}`);

/**
 * The 200 with the job's version: not res.send, which would hash the body for an ETag of its own when
 * none were set, and turn a 200 into a 304 by its own reading of If-None-Match (`req.fresh`). The
 * front door writes the same answer (its headers before these).
 */
export function sendWholeAnswer(res: ServerResponse, version: string, body: Buffer): void {
  res.statusCode = 200;
  res.setHeader('ETag', jobStatusEtag(version));
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Content-Length', body.length);
  res.end(body);
}
