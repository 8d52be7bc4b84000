import { Module } from '@nestjs/common';
import { UserDeletionsModule } from '@bns/service-kit';
import { AccountApi } from './account.api.js';
import { AccountController } from './account.controller.js';

/** /api/account: deletion, its progress, retention. */
@Module({ imports: [UserDeletionsModule], controllers: [AccountController], providers: [AccountApi] })
export class AccountApiModule {}
