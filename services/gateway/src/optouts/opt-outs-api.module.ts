import { Module } from '@nestjs/common';
import { OptOutsController } from './opt-outs.controller.js';

/** /api/opt-outs/..., answered by the jobs service over NATS. */
@Module({ controllers: [OptOutsController] })
export class OptOutsApiModule {}
