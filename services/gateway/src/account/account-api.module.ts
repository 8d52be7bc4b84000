import { Module } from '@nestjs/common';
import { UserDeletionsModule } from '@bns/service-kit';
import { AccountApi } from './account.api.js';
import { AccountController } from './account.controller.js';
import { Takeout } from './takeout.js';
import { TakeoutLocks } from './takeout-locks.js';

/** /api/account: deletion, its progress, retention, the take-out. */
@Module({
  imports: [UserDeletionsModule],
  controllers: [AccountController],
  providers: [AccountApi, Takeout, TakeoutLocks],
})
export class AccountApiModule {}
