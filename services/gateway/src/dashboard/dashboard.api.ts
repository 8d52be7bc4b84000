import { Injectable } from '@nestjs/common';
import type { DashboardQuerySchema, Infer, SetPreferencesBodySchema } from '@bns/contracts';
import { RpcClient } from '@bns/service-kit';

/** The dashboard and the user's preferences, owned by the dashboard service. */
@Injectable()
export class DashboardApi {
  constructor(private readonly rpc: RpcClient) {}

  async dashboard(userId: string, query: Infer<typeof DashboardQuerySchema>) {
    return { success: true, data: await this.rpc.call('dashboard.get', { userId, limit: query.limit }) };
  }

  async setPreferences(userId: string, body: Infer<typeof SetPreferencesBodySchema>) {
    return {
      success: true,
      preferences: await this.rpc.call('dashboard.preferences.set', { userId, preferences: body.preferences }),
    };
  }
}
