import { Injectable } from '@nestjs/common';
import type { ContactsSettings } from '@bns/contracts';
import { rows, Transactions } from '@bns/service-kit';

/** The user's contact-book settings; a user who never changed them has the defaults. */
@Injectable()
export class SettingsRepository {
  constructor(private readonly tx: Transactions) {}

  async get(userId: string): Promise<ContactsSettings> {
    const [found] = await rows<{ save_recipients: boolean }>(
      this.tx.manager,
      `SELECT save_recipients FROM settings WHERE user_id = $1`,
      [userId],
    );
    return { saveRecipients: found?.save_recipients ?? true };
  }

  async set(userId: string, settings: ContactsSettings): Promise<ContactsSettings> {
    await rows(
      this.tx.manager,
      `INSERT INTO settings (user_id, save_recipients) VALUES ($1, $2)
       ON CONFLICT (user_id) DO UPDATE SET save_recipients = excluded.save_recipients`,
      [userId, settings.saveRecipients],
    );
    return settings;
  }
}
