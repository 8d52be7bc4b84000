import { Injectable } from '@nestjs/common';
import { Transactions } from '@bns/service-kit';
import { SimAuthEntity } from './sim-auth.entity.js';

/** Every query of `sim_auth`, the simulated engine's sealed logins (the bytes are sealed by the caller). */
@Injectable()
export class SimAuthRepository {
  constructor(private readonly tx: Transactions) {}

  private get repo() {
    return this.tx.manager.getRepository(SimAuthEntity);
  }

  exists(userId: string): Promise<boolean> {
    return this.repo.exists({ where: { userId } });
  }

  async save(userId: string, data: Buffer): Promise<void> {
    await this.repo
      .createQueryBuilder()
      .insert()
      .values({ userId, data, savedAt: () => 'now()' })
      .orUpdate(['data', 'saved_at'], ['user_id'])
      .execute();
  }

  async load(userId: string): Promise<Buffer | undefined> {
    return (await this.repo.findOne({ select: { data: true }, where: { userId } }))?.data;
  }

  async delete(userId: string): Promise<number> {
    return (await this.repo.delete({ userId })).affected ?? 0;
  }

  /** Every user with a stored login (the start-up check walks them one by one). */
  async userIds(): Promise<string[]> {
    return (await this.repo.find({ select: { userId: true } })).map((r) => r.userId);
  }

  /** Replaces a login only if it is still `old` (nothing saved a newer one meanwhile). */
  async replace(userId: string, old: Buffer, data: Buffer): Promise<boolean> {
    const res = await this.repo
      .createQueryBuilder()
      .update()
      .set({ data })
      .where('user_id = :userId AND data = :old', { userId, old })
      .execute();
    return (res.affected ?? 0) > 0;
  }
}
