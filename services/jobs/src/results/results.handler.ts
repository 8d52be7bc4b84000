import { Controller } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import type { ReplyOf, RequestOf } from '@bns/contracts';
import { ResultsService } from './results.service.js';

@Controller()
export class ResultsHandler {
  constructor(private readonly results: ResultsService) {}

  @MessagePattern('jobs.results')
  page(@Payload() req: RequestOf<'jobs.results'>): Promise<ReplyOf<'jobs.results'>> {
    return this.results.page(req);
  }

  @MessagePattern('jobs.list')
  list(@Payload() req: RequestOf<'jobs.list'>): Promise<ReplyOf<'jobs.list'>> {
    return this.results.history(req);
  }

  /** Answers the file's name and type; the file follows to the caller's inbox once this answer is out. */
  @MessagePattern('jobs.export')
  async export(@Payload() req: RequestOf<'jobs.export'>): Promise<ReplyOf<'jobs.export'>> {
    const { start, run } = await this.results.beginExport(req);
    setImmediate(() => void run());
    return start;
  }
}
