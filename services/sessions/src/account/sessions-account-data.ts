import { Injectable } from '@nestjs/common';
import { deleteUserRows, Transactions, type AccountData } from '@bns/service-kit';
import { SessionManager } from '../sessions/session-manager.service.js';

/**
 * The user's WhatsApp link, on the user's shard only: logged out of WhatsApp and its stored login
 * destroyed (the sign-out cleanup), then every row with the user's id (link, sends ledger, simulated
 * phone, auth state). A failed logout step does not stop the deletion: the rows go either way.
 */
@Injectable()
export class SessionsAccountData implements AccountData {
  constructor(
    private readonly tx: Transactions,
    private readonly sessions: SessionManager,
  ) {}

  async deleteUser(userId: string): Promise<number> {
    await this.sessions.logout(userId);
    return deleteUserRows(this.tx.manager, userId);
  }
}
