import { Controller, Inject } from '@nestjs/common';
import { Payload } from '@nestjs/microservices';
import type { ReplyOf, RequestOf } from '@bns/contracts';
import { Rpc, SERVICE_ENV } from '@bns/service-kit';
import type { JobsEnv } from '../config/env.js';
import { JobStarts } from '../admission/job-starts.service.js';
import { SendsTodayService } from './sends-today.service.js';
import { JobIds } from '../store/job-ids.js';
import { JobsService } from './jobs.service.js';

@Controller()
export class JobsHandler {
  constructor(
    private readonly jobs: JobsService,
    private readonly starts: JobStarts,
    private readonly ids: JobIds,
    private readonly sendsToday: SendsTodayService,
    @Inject(SERVICE_ENV) private readonly env: JobsEnv,
  ) {}

  @Rpc('jobs.start')
  start(@Payload() req: RequestOf<'jobs.start'>): Promise<ReplyOf<'jobs.start'>> {
    return this.starts.start(req);
  }

  @Rpc('jobs.status')
  status(@Payload() req: RequestOf<'jobs.status'>): Promise<ReplyOf<'jobs.status'>> {
    return this.jobs.status(req);
  }

  @Rpc('jobs.logs')
  logs(@Payload() req: RequestOf<'jobs.logs'>): Promise<ReplyOf<'jobs.logs'>> {
    return this.jobs.logs(req);
  }

  @Rpc('jobs.pause')
  pause(@Payload() req: RequestOf<'jobs.pause'>): Promise<ReplyOf<'jobs.pause'>> {
    return this.jobs.pause(req);
  }

  @Rpc('jobs.resume')
  resume(@Payload() req: RequestOf<'jobs.resume'>): Promise<ReplyOf<'jobs.resume'>> {
    return this.jobs.resume(req);
  }

  @Rpc('jobs.policy.get')
  getPolicy(@Payload() req: RequestOf<'jobs.policy.get'>): Promise<ReplyOf<'jobs.policy.get'>> {
    return this.jobs.getPolicy(req);
  }

  @Rpc('jobs.policy.set')
  setPolicy(@Payload() req: RequestOf<'jobs.policy.set'>): Promise<ReplyOf<'jobs.policy.set'>> {
    return this.jobs.setPolicy(req);
  }

  /** Today's sends against the daily cap (GET /v1/account). */
  @Rpc('jobs.sends.today')
  today(@Payload() req: RequestOf<'jobs.sends.today'>): Promise<ReplyOf<'jobs.sends.today'>> {
    return this.sendsToday.of(req.userId);
  }

  @Rpc('jobs.cancel')
  cancel(@Payload() req: RequestOf<'jobs.cancel'>): Promise<ReplyOf<'jobs.cancel'>> {
    return this.jobs.cancel(req);
  }

  /** How job ids are made, so the gateway answers an id that names no job itself. */
  @Rpc('jobs.idScheme')
  async idScheme(@Payload() _req: RequestOf<'jobs.idScheme'>): Promise<ReplyOf<'jobs.idScheme'>> {
    const { key, legacyIds } = await this.ids.scheme();
    return { key: key.toString('base64'), legacyIds };
  }

  /** The configured pacing, so the web's estimate before a start is the one the start answers with. */
  @Rpc('jobs.pacing')
  pacing(@Payload() _req: RequestOf<'jobs.pacing'>): ReplyOf<'jobs.pacing'> {
    return { sendDelayMs: this.env.SEND_DELAY_MS, sendJitterMs: this.env.SEND_JITTER_MS };
  }
}
