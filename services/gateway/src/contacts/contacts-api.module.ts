import { Module } from '@nestjs/common';
import { JobStarter } from '../jobs/job-starter.js';
import { ContactsApi } from './contacts.api.js';
import { ContactsController } from './contacts.controller.js';

/** /api/contacts, /api/segments and /api/conversations, answered by the contacts service over NATS. */
@Module({ controllers: [ContactsController], providers: [ContactsApi, JobStarter], exports: [ContactsApi] })
export class ContactsApiModule {}
