import { Controller } from '@nestjs/common';
import { Payload } from '@nestjs/microservices';
import type { ReplyOf, RequestOf } from '@bns/contracts';
import { Rpc } from '@bns/service-kit';
import { ResultsService } from './results.service.js';

@Controller()
export class ResultsHandler {
  constructor(private readonly results: ResultsService) {}

  @Rpc('jobs.results')
  page(@Payload() req: RequestOf<'jobs.results'>): Promise<ReplyOf<'jobs.results'>> {
    return this.results.page(req);
  }

  @Rpc('jobs.list')
  list(@Payload() req: RequestOf<'jobs.list'>): Promise<ReplyOf<'jobs.list'>> {
    return this.results.history(req);
  }

  /** Answers the file's name and type; the file follows to the caller's inbox once this answer is out. */
  @Rpc('jobs.export')
  async export(@Payload() req: RequestOf<'jobs.export'>): Promise<ReplyOf<'jobs.export'>> {
    const { start, run } = await this.results.beginExport(req);
    setImmediate(() => void run());
    return start;
  }
}
