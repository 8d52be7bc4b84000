import type { DatabaseOptions } from '@bns/service-kit';
import { CreateContacts1797500000000 } from './migrations/1797500000000-create-contacts.js';
import { CountContactsPerUser1797600000000 } from './migrations/1797600000000-count-contacts-per-user.js';
import { Retention1798100000000 } from './migrations/1798100000000-retention.js';
import { ConversationsWithReplies1799100000000 } from './migrations/1799100000000-conversations-with-replies.js';

/** The contacts schema: repositories use raw SQL on the tables its migrations create. */
export const CONTACTS_DATABASE = {
  schema: 'contacts',
  entities: [],
  migrations: [
    CreateContacts1797500000000,
    CountContactsPerUser1797600000000,
    Retention1798100000000,
    ConversationsWithReplies1799100000000,
  ],
} satisfies Omit<DatabaseOptions, 'url'>;
