import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { SecretBox, SecretKeyMismatchError } from '@bns/service-kit';
import { startSystem, waitFor, type ServiceHandle, type System } from '@bns/testing';
import { linkUser, type LinkedUser } from './link-helpers.js';
import { RecordingSocket } from './socket-helpers.js';

const newKey = () => randomBytes(32).toString('base64');
const ZIP_MAGIC = Buffer.from([0x50, 0x4b, 0x03, 0x04]);

/** A fresh tab asks non-explicitly, as the web does on load: a restored link answers exist. */
async function existsAfterReload(gatewayUrl: string, user: LinkedUser) {
  const tab = await RecordingSocket.connect(gatewayUrl, user.token);
  try {
    tab.emit('createSession', { id: user.userId, clerkUserId: user.userId });
    return (await tab.waitFor('exist', 1, 20_000)).payload;
  } finally {
    tab.close();
  }
}

describe('stored WhatsApp logins are sealed at rest under SESSION_STATE_KEY', () => {
  let sys: System;
  let db: pg.Client;
  let shard: ServiceHandle;
  let user: LinkedUser;
  const firstKey = () => sys.baseEnv.SESSION_STATE_KEY!;
  const restart = async (env: Record<string, string>, label: string) => {
    shard = await sys.start('sessions', { SHARD_INDEX: '0', ...env }, label);
    return shard;
  };
  const simRow = async (userId: string): Promise<Buffer | undefined> =>
    (await db.query('SELECT data FROM sessions.sim_auth WHERE user_id = $1', [userId])).rows[0]?.data;

  beforeAll(async () => {
    sys = await startSystem({
      shards: 1,
      services: ['sessions'],
      env: { SIM_QR_INTERVAL_MS: '5000', SIM_READY_DELAY_MS: '50' },
    });
    shard = sys.services.find((h) => h.name === 'sessions')!;
    db = new pg.Client({ connectionString: sys.postgres.url });
    await db.connect();
    user = await linkUser(sys.gateway.url, 'sealed@example.com');
    user.tab.close();
  }, 180_000);

  afterAll(async () => {
    user?.tab.close();
    await db?.end();
    await shard?.stop();
    await sys?.stop();
  });

  it('SQL sees no plaintext of a login; after kill -9 the shard restores it with the key', async () => {
    const row = (await simRow(user.userId))!;
    expect(row).toBeDefined();
    expect(SecretBox.isSealedBytes(row)).toBe(true);
    // It opens with the key, to the account's number.
    const opened = new SecretBox(firstKey(), 'SESSION_STATE_KEY').openBytes(row).toString('utf8');
    expect(opened).toContain(`${user.phoneNumber}@s.whatsapp.net`);
    // None of the login's text is in the stored bytes: pieces of 8 bytes and more, which random
    // ciphertext of a few KB holds by chance about never (a 2-byte piece such as `{"` it often does).
    for (const plain of [user.phoneNumber, 'noiseKey', 's.whatsapp.net', opened.slice(0, 16), opened.slice(-16)]) {
      expect(opened).toContain(plain);
      expect(row.includes(Buffer.from(plain))).toBe(false);
    }
    expect(() => new SecretBox(newKey(), 'SESSION_STATE_KEY').openBytes(row)).toThrow(SecretKeyMismatchError);

    await shard.kill9();
    await restart({}, 'sessions-0-after-kill');
    expect(await existsAfterReload(sys.gateway.url, user)).toEqual({
      id: user.sessionId,
      phoneNumber: user.phoneNumber,
    });
  });

  it('seals logins written before sealing existed at start, without unlinking anyone', async () => {
    await shard.stop();
    // Before sealing, a simulated link had no login of its own, and webjs profiles were plain zips.
    await db.query('DELETE FROM sessions.sim_auth WHERE user_id = $1', [user.userId]);
    const plainZip = Buffer.concat([ZIP_MAGIC, Buffer.from('Default/Local Storage/legacy.ldb')]);
    await db.query(
      `INSERT INTO sessions.webjs_auth (session, user_id, data, size_bytes) VALUES ('RemoteAuth-legacy', $1, $2, $3)`,
      [user.userId, plainZip, plainZip.length],
    );
    await restart({}, 'sessions-0-legacy');
    const zip = (await db.query(`SELECT data FROM sessions.webjs_auth WHERE session = 'RemoteAuth-legacy'`)).rows[0]
      .data as Buffer;
    expect(SecretBox.isSealedBytes(zip)).toBe(true);
    expect(zip.includes(Buffer.from('legacy.ldb'))).toBe(false);
    expect(new SecretBox(firstKey(), 'SESSION_STATE_KEY').openBytes(zip).equals(plainZip)).toBe(true);
    expect(SecretBox.isSealedBytes((await simRow(user.userId))!)).toBe(true);
    expect(await existsAfterReload(sys.gateway.url, user)).toEqual({
      id: user.sessionId,
      phoneNumber: user.phoneNumber,
    });
  });

  it('rotation: a new key with the old one as previous reseals every login and keeps the link', async () => {
    const rotated = newKey();
    await shard.stop();
    await restart({ SESSION_STATE_KEY: rotated, SESSION_STATE_KEY_PREVIOUS: firstKey() }, 'sessions-0-rotating');
    const row = (await simRow(user.userId))!;
    expect(new SecretBox(rotated, 'SESSION_STATE_KEY').openBytes(row).toString('utf8')).toContain(user.phoneNumber);
    expect(() => new SecretBox(firstKey(), 'SESSION_STATE_KEY').openBytes(row)).toThrow(SecretKeyMismatchError);
    expect(await existsAfterReload(sys.gateway.url, user)).toEqual({
      id: user.sessionId,
      phoneNumber: user.phoneNumber,
    });

    // Once rotated, the new key alone is enough.
    await shard.stop();
    await restart({ SESSION_STATE_KEY: rotated }, 'sessions-0-rotated');
    expect(await existsAfterReload(sys.gateway.url, user)).toEqual({
      id: user.sessionId,
      phoneNumber: user.phoneNumber,
    });
    await shard.stop();
    sys.baseEnv.SESSION_STATE_KEY = rotated;
  });

  it('a wrong key stops the shard at start with a line naming SESSION_STATE_KEY, and unlinks nobody', async () => {
    const failure = await sys
      .start('sessions', { SHARD_INDEX: '0', SESSION_STATE_KEY: newKey() }, 'sessions-0-wrong-key')
      .then(
        (h) => h,
        (err: Error) => err,
      );
    if (!(failure instanceof Error)) {
      await failure.stop();
      throw new Error('the shard started under a key that does not open its logins');
    }
    expect(failure.message).toMatch(/SESSION_STATE_KEY does not open \d+ stored WhatsApp login\(s\)/);
    expect((await db.query('SELECT 1 FROM sessions.links WHERE user_id = $1', [user.userId])).rowCount).toBe(1);
    expect(await simRow(user.userId)).toBeDefined();

    // A malformed key is refused by name before anything starts.
    const malformed = await sys
      .start('sessions', { SHARD_INDEX: '0', SESSION_STATE_KEY: 'short' }, 'sessions-0-bad-key')
      .catch((err: Error) => err);
    expect(String((malformed as Error).message)).toContain('SESSION_STATE_KEY must be 32 random bytes');

    await restart({}, 'sessions-0-right-key');
    await waitFor(async () => {
      try {
        return (await existsAfterReload(sys.gateway.url, user)).phoneNumber === user.phoneNumber;
      } catch {
        return false;
      }
    }, 20_000);
  });
});
