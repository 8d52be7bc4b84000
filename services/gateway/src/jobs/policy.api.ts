import { Injectable } from '@nestjs/common';
import { RpcClient } from '@bns/service-kit';

/** The account's sending policy, owned (validated and enforced) by the jobs service. */
@Injectable()
export class PolicyApi {
  constructor(private readonly rpc: RpcClient) {}

  async get(userId: string) {
    const { policy } = await this.rpc.call('jobs.policy.get', { userId });
    return { success: true, policy };
  }

  /** Today's sends against the daily cap, and the messages to numbers that never replied (this month, 30 days). */
  async sendsToday(userId: string) {
    const today = await this.rpc.call('jobs.sends.today', { userId });
    return { success: true, today };
  }

  async set(userId: string, body: unknown) {
    // clerkUserId, when the client sends it, is who acts (AuthGuard checked it), not a policy setting.
    const update =
      typeof body === 'object' && body !== null && !Array.isArray(body)
        ? { ...(body as Record<string, unknown>) }
        : body;
    if (typeof update === 'object' && update !== null) delete (update as Record<string, unknown>).clerkUserId;
    const { policy } = await this.rpc.call('jobs.policy.set', { userId, policy: update ?? {} });
    return { success: true, policy };
  }
}
