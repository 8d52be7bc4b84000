import { Injectable } from '@nestjs/common';
import type { ApiKey, ApiKeyPrincipal, ApiKeyScope } from '@bns/contracts';
import { row, rows, Transactions } from '@bns/service-kit';

interface KeyRow {
  id: string;
  name: string;
  prefix: string;
  scopes: ApiKeyScope[];
  created_at: Date;
  last_used_at: Date | null;
}

const toKey = (r: KeyRow): ApiKey => ({
  id: r.id,
  name: r.name,
  prefix: r.prefix,
  scopes: r.scopes,
  createdAt: r.created_at.toISOString(),
  lastUsedAt: r.last_used_at?.toISOString() ?? null,
});

const COLUMNS = 'id, name, prefix, scopes, created_at, last_used_at';

/** Every query of api_keys; each user query is bounded by the owner, so another's key is "not found". */
@Injectable()
export class ApiKeysRepository {
  constructor(private readonly tx: Transactions) {}

  /**
   * Stores a key unless the user already holds `max` live ones ('full'). The user's creates take a
   * transaction-scoped advisory lock, so two at once cannot both count max − 1 and both insert.
   */
  insertUnlessFull(
    userId: string,
    key: { name: string; scopes: ApiKeyScope[]; prefix: string; hash: string },
    max: number,
    now: Date,
  ): Promise<ApiKey | 'full'> {
    return this.tx.run(async (em) => {
      await em.query(`SELECT pg_advisory_xact_lock(hashtext('bns:api-keys:' || $1))`, [userId]);
      const [{ n }] = await rows<{ n: number }>(
        em,
        `SELECT count(*)::int AS n FROM api_keys WHERE user_id = $1 AND revoked_at IS NULL`,
        [userId],
      );
      if (n >= max) return 'full';
      const [created] = await rows<KeyRow>(
        em,
        `INSERT INTO api_keys (user_id, name, prefix, secret_hash, scopes, created_at) VALUES ($1, $2, $3, $4, $5, $6) RETURNING ${COLUMNS}`,
        [userId, key.name, key.prefix, key.hash, key.scopes, now],
      );
      return toKey(created!);
    });
  }

  async listLive(userId: string): Promise<ApiKey[]> {
    const found = await rows<KeyRow>(
      this.tx.manager,
      `SELECT ${COLUMNS} FROM api_keys WHERE user_id = $1 AND revoked_at IS NULL ORDER BY created_at DESC, id`,
      [userId],
    );
    return found.map(toKey);
  }

  /** True when the user had such a live key (now revoked). */
  async revoke(userId: string, keyId: string, now: Date): Promise<boolean> {
    const done = await rows(
      this.tx.manager,
      `UPDATE api_keys SET revoked_at = $3 WHERE id = $2 AND user_id = $1 AND revoked_at IS NULL RETURNING id`,
      [userId, keyId, now],
    );
    return done.length > 0;
  }

  async findLiveByHash(hash: string): Promise<ApiKeyPrincipal | undefined> {
    const found = await row<{ id: string; user_id: string; scopes: ApiKeyScope[] }>(
      this.tx.manager,
      `SELECT id, user_id, scopes FROM api_keys WHERE secret_hash = $1 AND revoked_at IS NULL`,
      [hash],
    );
    return found ? { keyId: found.id, userId: found.user_id, scopes: found.scopes } : undefined;
  }

  /** Last-used times only move forward (several gateways report). */
  async touch(keyId: string, at: Date): Promise<void> {
    await rows(
      this.tx.manager,
      `UPDATE api_keys SET last_used_at = $2 WHERE id = $1 AND (last_used_at IS NULL OR last_used_at < $2)`,
      [keyId, at],
    );
  }
}
