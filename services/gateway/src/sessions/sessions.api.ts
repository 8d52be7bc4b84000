import { Injectable } from '@nestjs/common';
import { SESSION_MESSAGES } from '@bns/contracts';
import { RpcClient } from '@bns/service-kit';

/** The user's WhatsApp link, owned by the user's sessions shard. */
@Injectable()
export class SessionsApi {
  constructor(private readonly rpc: RpcClient) {}

  /** Sign-out cleanup: logs the WhatsApp account out and deletes its stored login. */
  async cleanup(userId: string) {
    const { sessionsCleanedUp, failures = [] } = await this.rpc.call('sessions.logout', { userId });
    if (failures.length > 0) {
      // A partial cleanup is still a 200: sign-out goes on, and the web warns with what is left.
      return {
        success: false,
        partial: true,
        sessionsCleanedUp,
        error: failures.map((f) => f.message).join('; '),
        message: SESSION_MESSAGES.cleanupPartial,
        failures,
      };
    }
    return {
      success: true,
      sessionsCleanedUp,
      message: sessionsCleanedUp > 0 ? SESSION_MESSAGES.cleanupDone : SESSION_MESSAGES.cleanupNothing,
    };
  }
}

/** Dev-only: the phone's side of the simulated engine, on the caller's own account (sessions.simulator.*). */
@Injectable()
export class SimulatorApi {
  constructor(private readonly rpc: RpcClient) {}

  async scan(userId: string) {
    return { success: true, ...(await this.rpc.call('sessions.simulator.scan', { userId })) };
  }

  async pair(userId: string, body: unknown) {
    const { code } = (body ?? {}) as Record<string, unknown>;
    // The sessions service checks the code's form (a request schema) and whether it is the one showing.
    return { success: true, ...(await this.rpc.call('sessions.simulator.pair', { userId, code: code as string })) };
  }

  async disconnect(userId: string) {
    return { success: true, ...(await this.rpc.call('sessions.simulator.disconnect', { userId })) };
  }

  async inbound(userId: string, body: unknown) {
    const { from, lid, text, quotedMessageId } = (body ?? {}) as Record<string, unknown>;
    // The sessions service validates them and answers a validation error (400) for bad ones.
    return {
      success: true,
      ...(await this.rpc.call('sessions.simulator.inbound', {
        userId,
        ...(from !== undefined ? { from: from as string } : {}),
        ...(lid !== undefined ? { lid: lid as string } : {}),
        text: text as string,
        ...(quotedMessageId !== undefined ? { quotedMessageId: quotedMessageId as string } : {}),
      })),
    };
  }

  async outbox(userId: string) {
    return { success: true, ...(await this.rpc.call('sessions.simulator.outbox', { userId })) };
  }
}
