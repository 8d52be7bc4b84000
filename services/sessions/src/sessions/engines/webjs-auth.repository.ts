import { Injectable } from '@nestjs/common';
import { Transactions } from '@bns/service-kit';
import { WebjsAuthEntity } from './webjs-auth.entity.js';

/** Every query of `webjs_auth`, the whatsapp-web.js RemoteAuth profile zips. */
@Injectable()
export class WebjsAuthRepository {
  constructor(private readonly tx: Transactions) {}

  private get repo() {
    return this.tx.manager.getRepository(WebjsAuthEntity);
  }

  exists(session: string): Promise<boolean> {
    return this.repo.exists({ where: { session } });
  }

  /** Replaces the session's zip in one statement, so a crash never leaves half a login behind. */
  async save(session: string, userId: string, data: Buffer): Promise<void> {
    await this.repo
      .createQueryBuilder()
      .insert()
      .values({ session, userId, data, sizeBytes: data.length, savedAt: () => 'now()' })
      .orUpdate(['data', 'size_bytes', 'saved_at', 'user_id'], ['session'])
      .execute();
  }

  async load(session: string): Promise<Buffer | undefined> {
    return (await this.repo.findOne({ select: { data: true }, where: { session } }))?.data;
  }

  async delete(session: string): Promise<void> {
    await this.repo.delete({ session });
  }

  /** Every stored profile: its session name and user (the start-up check walks them one by one). */
  async sessions(): Promise<{ session: string; userId: string }[]> {
    return this.repo.find({ select: { session: true, userId: true } });
  }

  /** Replaces a profile only if it is still `old` (no backup saved a newer one meanwhile). */
  async replace(session: string, old: Buffer, data: Buffer): Promise<boolean> {
    const res = await this.repo
      .createQueryBuilder()
      .update()
      .set({ data, sizeBytes: data.length })
      .where('session = :session AND data = :old', { session, old })
      .execute();
    return (res.affected ?? 0) > 0;
  }

  /** Every stored login of one user; how many rows went. */
  async deleteByUser(userId: string): Promise<number> {
    return (await this.repo.delete({ userId })).affected ?? 0;
  }
}
