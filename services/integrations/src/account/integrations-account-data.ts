import { Inject, Injectable } from '@nestjs/common';
import type { NatsConnection } from '@nats-io/transport-node';
import { API_KEY_REVOKED_SUBJECT, type ApiKeyRevokedNotice } from '@bns/contracts';
import { deleteUserRows, NATS_CONNECTION, rows, Transactions, type AccountData } from '@bns/service-kit';

/**
 * The user's API keys, webhook endpoints and deliveries, campaign states, idempotency keys, retention
 * setting (every table with a user_id). The deletion's own record is kept by a hash of the id. The
 * keys are then revoked on every gateway, as a revocation does: a gateway that still remembered one
 * would otherwise accept it until its cache entry expires.
 */
@Injectable()
export class IntegrationsAccountData implements AccountData {
  constructor(
    private readonly tx: Transactions,
    @Inject(NATS_CONNECTION) private readonly nc: NatsConnection,
  ) {}

  async deleteUser(userId: string): Promise<number> {
    const keys = await rows<{ id: string }>(this.tx.manager, `SELECT id::text AS id FROM api_keys WHERE user_id = $1`, [
      userId,
    ]);
    // Deleted first: a gateway that asks again after the notice finds no key.
    const deleted = await deleteUserRows(this.tx.manager, userId);
    for (const { id } of keys) {
      const notice: ApiKeyRevokedNotice = { keyId: id };
      this.nc.publish(API_KEY_REVOKED_SUBJECT, JSON.stringify(notice));
    }
    await this.nc.flush();
    return deleted;
  }
}
