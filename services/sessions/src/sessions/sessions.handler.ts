import { Controller } from '@nestjs/common';
import { Payload } from '@nestjs/microservices';
import type { ReplyOf, RequestOf } from '@bns/contracts';
import { Rpc } from '@bns/service-kit';
import { countSend } from '../metrics/sessions.metrics.js';
import { SessionManager } from './session-manager.service.js';
import { SimulatorControls } from './simulator-controls.service.js';

/** Logical keys; the kit listens on `sessions.<SHARD_INDEX>.<verb>`, so each user reaches its own shard. */
@Controller()
export class SessionsHandler {
  constructor(
    private readonly sessions: SessionManager,
    private readonly simulator: SimulatorControls,
  ) {}

  @Rpc('sessions.connect')
  connect(@Payload() req: RequestOf<'sessions.connect'>): Promise<ReplyOf<'sessions.connect'>> {
    return this.sessions.connect(req.userId, req.explicit === true);
  }

  @Rpc('sessions.status')
  status(@Payload() req: RequestOf<'sessions.status'>): Promise<ReplyOf<'sessions.status'>> {
    return this.sessions.status(req.userId);
  }

  @Rpc('sessions.send')
  send(@Payload() req: RequestOf<'sessions.send'>): Promise<ReplyOf<'sessions.send'>> {
    return countSend(this.sessions.send(req));
  }

  @Rpc('sessions.logout')
  logout(@Payload() req: RequestOf<'sessions.logout'>): Promise<ReplyOf<'sessions.logout'>> {
    return this.sessions.logout(req.userId);
  }

  @Rpc('sessions.pairing.request')
  requestPairingCode(
    @Payload() req: RequestOf<'sessions.pairing.request'>,
  ): Promise<ReplyOf<'sessions.pairing.request'>> {
    return this.sessions.requestPairingCode(req.userId, req.phoneNumber);
  }

  @Rpc('sessions.pairing.cancel')
  cancelPairingCode(@Payload() req: RequestOf<'sessions.pairing.cancel'>): Promise<ReplyOf<'sessions.pairing.cancel'>> {
    return this.sessions.cancelPairingCode(req.userId);
  }

  @Rpc('sessions.simulator.pair')
  pair(@Payload() req: RequestOf<'sessions.simulator.pair'>): Promise<ReplyOf<'sessions.simulator.pair'>> {
    return this.simulator.pair(req.userId, req.code);
  }

  @Rpc('sessions.simulator.scan')
  scan(@Payload() req: RequestOf<'sessions.simulator.scan'>): Promise<ReplyOf<'sessions.simulator.scan'>> {
    return this.simulator.scan(req.userId);
  }

  @Rpc('sessions.simulator.disconnect')
  disconnect(
    @Payload() req: RequestOf<'sessions.simulator.disconnect'>,
  ): Promise<ReplyOf<'sessions.simulator.disconnect'>> {
    return this.simulator.disconnect(req.userId);
  }

  @Rpc('sessions.simulator.inbound')
  inbound(@Payload() req: RequestOf<'sessions.simulator.inbound'>): Promise<ReplyOf<'sessions.simulator.inbound'>> {
    return this.simulator.inbound(req);
  }

  @Rpc('sessions.simulator.outbox')
  outbox(@Payload() req: RequestOf<'sessions.simulator.outbox'>): Promise<ReplyOf<'sessions.simulator.outbox'>> {
    return this.simulator.outbox(req.userId);
  }
}
