import { Controller } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import type { ReplyOf, RequestOf } from '@bns/contracts';
import { countSend } from '../metrics/sessions.metrics.js';
import { SessionManager } from './session-manager.service.js';

/** Logical keys; the kit listens on `sessions.<SHARD_INDEX>.<verb>`, so each user reaches its own shard. */
@Controller()
export class SessionsHandler {
  constructor(private readonly sessions: SessionManager) {}

  @MessagePattern('sessions.connect')
  connect(@Payload() req: RequestOf<'sessions.connect'>): Promise<ReplyOf<'sessions.connect'>> {
    return this.sessions.connect(req.userId, req.explicit === true);
  }

  @MessagePattern('sessions.status')
  status(@Payload() req: RequestOf<'sessions.status'>): Promise<ReplyOf<'sessions.status'>> {
    return this.sessions.status(req.userId);
  }

  @MessagePattern('sessions.send')
  send(@Payload() req: RequestOf<'sessions.send'>): Promise<ReplyOf<'sessions.send'>> {
    return countSend(this.sessions.send(req));
  }

  @MessagePattern('sessions.logout')
  logout(@Payload() req: RequestOf<'sessions.logout'>): Promise<ReplyOf<'sessions.logout'>> {
    return this.sessions.logout(req.userId);
  }

  @MessagePattern('sessions.simulator.scan')
  scan(@Payload() req: RequestOf<'sessions.simulator.scan'>): Promise<ReplyOf<'sessions.simulator.scan'>> {
    return this.sessions.simulatorScan(req.userId);
  }

  @MessagePattern('sessions.simulator.disconnect')
  disconnect(@Payload() req: RequestOf<'sessions.simulator.disconnect'>): Promise<ReplyOf<'sessions.simulator.disconnect'>> {
    return this.sessions.simulatorDisconnect(req.userId);
  }

  @MessagePattern('sessions.simulator.inbound')
  inbound(@Payload() req: RequestOf<'sessions.simulator.inbound'>): Promise<ReplyOf<'sessions.simulator.inbound'>> {
    return this.sessions.simulatorInbound(req);
  }

  @MessagePattern('sessions.simulator.outbox')
  outbox(@Payload() req: RequestOf<'sessions.simulator.outbox'>): Promise<ReplyOf<'sessions.simulator.outbox'>> {
    return this.sessions.simulatorOutbox(req.userId);
  }
}
