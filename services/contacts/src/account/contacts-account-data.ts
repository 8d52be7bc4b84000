import { Injectable } from '@nestjs/common';
import { deleteUserRows, Transactions, type AccountData } from '@bns/service-kit';
import { ContactsRepository } from '../contacts/contacts.repository.js';

/**
 * A user's contact book, its facts, segments, settings and inbox (every table with a user_id),
 * deleted with the account (the contact count's bookkeeping too, but not counted as data).
 */
@Injectable()
export class ContactsAccountData implements AccountData {
  constructor(
    private readonly tx: Transactions,
    private readonly contacts: ContactsRepository,
  ) {}

  async deleteUser(userId: string): Promise<number> {
    // The count's deltas go last: deleting the contacts appends one.
    const deleted = await deleteUserRows(this.tx.manager, userId, ['contact_count_deltas']);
    await this.contacts.forgetCount(userId);
    return deleted;
  }
}
