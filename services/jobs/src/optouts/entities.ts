import { JobSkipEntity } from './job-skip.entity.js';
import { NotOnWhatsAppEntity } from './not-on-whatsapp.entity.js';
import { OptOutSettingsEntity } from './opt-out-settings.entity.js';
import { OptOutEntity } from './opt-out.entity.js';

/** The opt-outs feature's tables, for the service's data source (created by 1795900000000-create-opt-outs). */
export const OPT_OUT_ENTITIES = [OptOutEntity, OptOutSettingsEntity, NotOnWhatsAppEntity, JobSkipEntity];
