import { runService } from '@bns/service-kit';
import { CONTACTS_ENV } from './config/env.js';
import { ContactsModule } from './contacts.module.js';
import { CONTACTS_DATABASE } from './database/data-source.js';

await runService({
  name: 'contacts',
  env: CONTACTS_ENV,
  defaultPort: 3006,
  natsHandlers: true,
  database: CONTACTS_DATABASE,
  module: () => ContactsModule,
});
