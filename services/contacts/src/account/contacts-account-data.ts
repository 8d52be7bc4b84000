import { Injectable } from '@nestjs/common';
import { deleteUserRows, Transactions, type AccountData } from '@bns/service-kit';

/**
 * Everything the contacts service holds for a user is keyed by user id (contacts, phone facts, campaign
 * outcomes, segments, settings, conversations and their messages): `deleteUserRows` takes every table,
 * a batch at a time.
 */
@Injectable()
export class ContactsAccountData implements AccountData {
  constructor(private readonly tx: Transactions) {}

  deleteUser(userId: string): Promise<number> {
    return deleteUserRows(this.tx.manager, userId);
  }
}
