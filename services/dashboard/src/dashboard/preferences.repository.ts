import { Injectable } from '@nestjs/common';
import { DataSource, type Repository } from 'typeorm';
import { UserPreferencesEntity } from './user-preferences.entity.js';

/** Every query of user_preferences. */
@Injectable()
export class PreferencesRepository {
  private readonly repo: Repository<UserPreferencesEntity>;

  constructor(db: DataSource) {
    this.repo = db.getRepository(UserPreferencesEntity);
  }

  /** The stored choice, or undefined when the user never changed the default. */
  async autoLoginMessageEnabled(userId: string): Promise<boolean | undefined> {
    const found = await this.repo.findOne({ select: { autoLoginMessageEnabled: true }, where: { userId } });
    return found?.autoLoginMessageEnabled;
  }

  /** Insert or overwrite in one statement, so two concurrent first saves cannot collide. */
  async setAutoLoginMessageEnabled(userId: string, enabled: boolean): Promise<boolean> {
    await this.repo
      .createQueryBuilder()
      .insert()
      .values({ userId, autoLoginMessageEnabled: enabled, updatedAt: () => 'now()' })
      .orUpdate(['auto_login_message_enabled', 'updated_at'], ['user_id'])
      .execute();
    return enabled;
  }
}
