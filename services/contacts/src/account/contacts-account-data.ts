import { Injectable } from '@nestjs/common';
import { deleteUserRows, Transactions, type AccountData } from '@bns/service-kit';

/**
 * A user's contact book, its facts, segments, settings and inbox (every table with a user_id),
 * deleted with the account.
 */
@Injectable()
export class ContactsAccountData implements AccountData {
  constructor(private readonly tx: Transactions) {}

  deleteUser(userId: string): Promise<number> {
    return deleteUserRows(this.tx.manager, userId);
  }
}
