import { Injectable } from '@nestjs/common';
import { IsNull, type FindOptionsSelect } from 'typeorm';
import { Transactions } from '@bns/service-kit';
import type { WaEngineName } from '@bns/contracts';
import { LinkEntity } from './link.entity.js';

export interface LinkRow {
  userId: string;
  sessionId: string;
  engine: WaEngineName;
  phoneNumber: string;
}

const ROW_COLUMNS: FindOptionsSelect<LinkEntity> = { userId: true, sessionId: true, engine: true, phoneNumber: true };

/** Every query of the `links` table: one row per linked account, the source of truth for restores. */
@Injectable()
export class LinksRepository {
  constructor(private readonly tx: Transactions) {}

  private get repo() {
    return this.tx.manager.getRepository(LinkEntity);
  }

  async find(userId: string): Promise<LinkRow | undefined> {
    return (await this.repo.findOne({ select: ROW_COLUMNS, where: { userId } })) ?? undefined;
  }

  all(engine: WaEngineName): Promise<LinkRow[]> {
    return this.repo.find({ select: ROW_COLUMNS, where: { engine }, order: { linkedAt: 'ASC' } });
  }

  /** A new link replaces any older one of the same user (a fresh session id, welcome not yet sent). */
  async save(link: LinkRow): Promise<void> {
    await this.repo
      .createQueryBuilder()
      .insert()
      .values({ ...link, linkedAt: () => 'now()', welcomeSentAt: null, updatedAt: () => 'now()' })
      .orUpdate(['session_id', 'engine', 'phone_number', 'linked_at', 'welcome_sent_at', 'updated_at'], ['user_id'])
      .execute();
  }

  async touch(userId: string): Promise<void> {
    await this.repo.update({ userId }, { updatedAt: () => 'now()' });
  }

  /** How many rows went (0 or 1). */
  async delete(userId: string): Promise<number> {
    return (await this.repo.delete({ userId })).affected ?? 0;
  }

  /** Claims the once-per-link welcome message; false when it was already claimed for this link. */
  async claimWelcome(userId: string, sessionId: string): Promise<boolean> {
    const result = await this.repo.update(
      { userId, sessionId, welcomeSentAt: IsNull() },
      { welcomeSentAt: () => 'now()' },
    );
    return (result.affected ?? 0) > 0;
  }
}
