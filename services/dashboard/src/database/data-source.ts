import { RetentionSettingEntity } from '../retention/retention-setting.entity.js';
import { Retention1798100000000 } from './migrations/1798100000000-retention.js';
import type { DatabaseOptions } from '@bns/service-kit';
import { UserPreferencesEntity } from '../dashboard/user-preferences.entity.js';
import { AppliedEventEntity } from '../projection/entities/applied-event.entity.js';
import { InboundMessageEntity } from '../projection/entities/inbound-message.entity.js';
import { JobSkipsEntity } from '../projection/entities/job-skips.entity.js';
import { LinkStateEntity } from '../projection/entities/link-state.entity.js';
import { MessageEntity } from '../projection/entities/message.entity.js';
import { MonthlyUsageEntity } from '../projection/entities/monthly-usage.entity.js';
import { SessionEntity } from '../projection/entities/session.entity.js';
import { UserTotalsEntity } from '../projection/entities/user-totals.entity.js';
import { CreateDashboard1763769600000 } from './migrations/1763769600000-create-dashboard.js';
import { AddReplies1795411802762 } from './migrations/1795411802762-add-replies.js';
import { JobSkips1798300000000 } from './migrations/1798300000000-job-skips.js';

/** The dashboard's schema: an entity per table, and the migrations that create them (the service and its tests share it). */
export const DASHBOARD_DATABASE = {
  schema: 'dashboard',
  entities: [
    UserPreferencesEntity,
    AppliedEventEntity,
    MessageEntity,
    UserTotalsEntity,
    MonthlyUsageEntity,
    LinkStateEntity,
    SessionEntity,
    InboundMessageEntity,
    JobSkipsEntity,
    RetentionSettingEntity,
  ],
  migrations: [CreateDashboard1763769600000, AddReplies1795411802762, Retention1798100000000, JobSkips1798300000000],
} satisfies Omit<DatabaseOptions, 'url'>;
