import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Receipts are no longer written on the ledger (FurthestReceipts), so a sent message's row is written
 * twice: claimed, then marked sent, which puts its WhatsApp id in an index and so is never a HOT
 * update. The room SendsHotReceipts1798700000000 kept on each page for the receipts' versions has
 * nothing left to hold: pages are packed full again. New pages only: rows already written keep theirs.
 */
export class SendsFullPages1798800000000 implements MigrationInterface {
  name = 'SendsFullPages1798800000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE sessions.sends RESET (fillfactor)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE sessions.sends SET (fillfactor = 60)`);
  }
}
