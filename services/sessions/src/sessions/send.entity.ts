import { Column, Entity, PrimaryColumn } from 'typeorm';

/** `job` sends come from bulk jobs and report acks; `welcome` is the auto-login message. */
export type SendKind = 'job' | 'welcome';

/**
 * - sending: claimed, the engine has it (or had it, when the process died);
 * - sent: WhatsApp took it;
 * - failed: refused for good (not on WhatsApp, or WhatsApp refused it): a retry answers the same refusal;
 * - unknown: the engine may have handed it to WhatsApp but did not confirm it (no result, a timeout
 *   after the hand-over): never sent again, since a second copy is worse than a missing confirmation.
 */
export type SendStatus = 'sending' | 'sent' | 'failed' | 'unknown';

/** What WhatsApp reports after a send; `failed` is ack -1. */
export type Receipt = 'failed' | 'delivered' | 'read';
/** A receipt only moves forward: a repeated or older ack is not a change. */
export const RECEIPT_RANK: Record<Receipt, number> = { failed: 1, delivered: 2, read: 3 };

/** `sessions.sends`: the send ledger, one row per (user, idempotency key). */
@Entity({ name: 'sends' })
export class SendEntity {
  @PrimaryColumn({ name: 'user_id', type: 'text' })
  userId!: string;

  @PrimaryColumn({ name: 'idempotency_key', type: 'text' })
  idempotencyKey!: string;

  @Column({ type: 'text', default: 'job' })
  kind!: SendKind;

  @Column({ type: 'text' })
  status!: SendStatus;

  @Column({ name: 'message_id', type: 'text', nullable: true })
  messageId!: string | null;

  @Column({ name: 'to_number', type: 'text' })
  toNumber!: string;

  @Column({ type: 'text' })
  text!: string;

  @Column({ name: 'error_code', type: 'text', nullable: true })
  errorCode!: string | null;

  @Column({ name: 'error_message', type: 'text', nullable: true })
  errorMessage!: string | null;

  @Column({ name: 'created_at', type: 'timestamptz', default: () => 'now()' })
  createdAt!: Date;

  @Column({ name: 'sent_at', type: 'timestamptz', nullable: true })
  sentAt!: Date | null;

  /**
   * The furthest receipt WhatsApp reported, as replicas of an earlier version wrote it; no longer
   * written (FurthestReceipts says why), kept while such a replica may still read it during an upgrade.
   */
  @Column({ type: 'text', nullable: true })
  receipt!: Receipt | null;

  /** When `receipt` was written; no longer written either. */
  @Column({ name: 'receipt_at', type: 'timestamptz', nullable: true })
  receiptAt!: Date | null;
}
