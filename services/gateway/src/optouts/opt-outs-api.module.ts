import { Module } from '@nestjs/common';
import { OptOutsApi } from './opt-outs.api.js';
import { OptOutsController } from './opt-outs.controller.js';

/** /api/opt-outs/..., answered by the jobs service over NATS. */
@Module({ controllers: [OptOutsController], providers: [OptOutsApi] })
export class OptOutsApiModule {}
