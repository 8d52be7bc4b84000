import { CreateSessions1763769600000 } from './migrations/1763769600000-create-sessions.js';
import { SendStatusUnknown1795411781000 } from './migrations/1795411781000-send-status-unknown.js';
import { OutboxAndReceipts1795412300000 } from './migrations/1795412300000-outbox-and-receipts.js';
import { SendsUserMessageIdx1796100000000 } from './migrations/1796100000000-sends-user-message-idx.js';
import { SimOutboxMedia1797800000000 } from './migrations/1797800000000-sim-outbox-media.js';
import { OutboxEntity } from '@bns/service-kit';
import { LinkEntity } from '../sessions/link.entity.js';
import { LidPhoneEntity } from '../sessions/lid-phone.entity.js';
import { LidPhones1797900000000 } from './migrations/1797900000000-lid-phones.js';
import { SendEntity } from '../sessions/send.entity.js';
import { SimOutboxEntity } from '../sessions/engines/sim-outbox.entity.js';
import { WebjsAuthEntity } from '../sessions/engines/webjs-auth.entity.js';
import { SimAuthEntity } from '../sessions/engines/sim-auth.entity.js';
import { SimAuth1798000000000 } from './migrations/1798000000000-sim-auth.js';
import { SendsHotReceipts1798700000000 } from './migrations/1798700000000-sends-hot-receipts.js';
import { SendsFullPages1798800000000 } from './migrations/1798800000000-sends-full-pages.js';

/** Every table of the `sessions` schema; the data source (main.ts and the tests) registers exactly these. */
export const SESSIONS_ENTITIES = [
  LinkEntity,
  SendEntity,
  SimOutboxEntity,
  WebjsAuthEntity,
  OutboxEntity,
  LidPhoneEntity,
  SimAuthEntity,
];

/** In order; each runs once per database under the migration lock. */
export const SESSIONS_MIGRATIONS = [
  CreateSessions1763769600000,
  SendStatusUnknown1795411781000,
  OutboxAndReceipts1795412300000,
  SendsUserMessageIdx1796100000000,
  LidPhones1797900000000,
  SimOutboxMedia1797800000000,
  SimAuth1798000000000,
  SendsHotReceipts1798700000000,
  SendsFullPages1798800000000,
];
