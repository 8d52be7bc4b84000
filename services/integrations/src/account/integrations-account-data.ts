import { Injectable } from '@nestjs/common';
import { deleteUserRows, Transactions, type AccountData } from '@bns/service-kit';

/**
 * The user's API keys, webhook endpoints and deliveries, campaign states, idempotency keys, retention
 * setting (every table with a user_id). The deletion's own record is kept by a hash of the id.
 */
@Injectable()
export class IntegrationsAccountData implements AccountData {
  constructor(private readonly tx: Transactions) {}

  deleteUser(userId: string): Promise<number> {
    return deleteUserRows(this.tx.manager, userId);
  }
}
