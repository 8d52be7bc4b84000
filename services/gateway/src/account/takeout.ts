import { once } from 'node:events';
import { Injectable } from '@nestjs/common';
import type { Response } from 'express';
import { Zip, ZipDeflate } from 'fflate';
import {
  ACCOUNT_LIMITS,
  ACCOUNT_MESSAGES,
  CONTACT_CSV_HEADER,
  CONTACTS_LIMITS,
  contactCsvLine,
  csvCell,
  OPT_OUT_LIMITS,
  RESULTS_LIMITS,
  TAKEOUT_AREAS,
  type TakeoutArea,
} from '@bns/contracts';
import { RpcClient } from '@bns/service-kit';
import { TakeoutLocks } from './takeout-locks.js';

type Put = (text: string) => Promise<void>;

/** A zip written to the response as it is made: each file's bytes go out as they are compressed. */
class ZipOut {
  private readonly zip: Zip;
  private readonly ready: Uint8Array[] = [];
  private failed?: Error;
  private readonly encoder = new TextEncoder();

  constructor(private readonly res: Response) {
    this.zip = new Zip((err, chunk) => {
      if (err) this.failed = err;
      else this.ready.push(chunk);
    });
  }

  /** One file, written by `write` a piece at a time (the pieces never wait in memory for the whole file). */
  async file(name: string, write: (put: Put) => Promise<void>): Promise<void> {
    const entry = new ZipDeflate(name, { level: 6 });
    this.zip.add(entry);
    await write(async (text) => {
      entry.push(this.encoder.encode(text));
      await this.flush();
    });
    entry.push(new Uint8Array(0), true);
    await this.flush();
  }

  async end(): Promise<void> {
    this.zip.end();
    await this.flush();
    this.res.end();
  }

  private async flush(): Promise<void> {
    if (this.failed) throw this.failed;
    for (const chunk of this.ready.splice(0)) {
      if (this.res.destroyed) throw new Error('the client went away');
      if (!this.res.write(chunk)) await Promise.race([once(this.res, 'drain'), once(this.res, 'close')]);
    }
  }
}

/** Values as CSV cells: text as it is (formulas neutralised), objects as JSON, nothing as empty. */
function csvRow(values: unknown[]): string {
  return `${values
    .map((v) => csvCell(v === null || v === undefined ? '' : typeof v === 'object' ? JSON.stringify(v) : String(v)))
    .join(',')}\r\n`;
}

/** A JSON array written an item at a time. */
async function jsonArray<T>(put: Put, items: AsyncIterable<T>, map: (item: T) => unknown = (i) => i): Promise<void> {
  let first = true;
  await put('[');
  for await (const item of items) {
    await put(`${first ? '\n' : ',\n'}${JSON.stringify(map(item))}`);
    first = false;
  }
  await put('\n]\n');
}

async function csvRows<T>(put: Put, header: string, items: AsyncIterable<T>, row: (item: T) => string): Promise<void> {
  await put(`\uFEFF${header}\r\n`);
  for await (const item of items) await put(row(item));
}

const CAMPAIGN_COLUMNS = [
  'jobId',
  'status',
  'createdAt',
  'startedAt',
  'finishedAt',
  'total',
  'sent',
  'failed',
  'skipped',
  'delivered',
  'read',
  'replied',
  'personalised',
  'detailsPurgedAfterDays',
  'message',
] as const;
const RESULT_COLUMNS = [
  'phoneNumber',
  'status',
  'error',
  'variables',
  'sentAt',
  'failedAt',
  'deliveredAt',
  'readAt',
  'repliedAt',
] as const;

/**
 * "Download my data": one zip, streamed, with a JSON and a CSV file per area (templates, campaigns with
 * their per-recipient results, opt-outs, contacts, preferences, policy, audit log), each read from its
 * owning service over NATS a page at a time while the zip is written, so nothing is held whole. One
 * runs per user at a time (TakeoutLocks).
 */
@Injectable()
export class Takeout {
  constructor(
    private readonly rpc: RpcClient,
    private readonly locks: TakeoutLocks,
  ) {}

  /** Writes the zip; false (a plain-text 409 already answered) when another take-out of the user runs. */
  async stream(userId: string, res: Response): Promise<boolean> {
    const hold = await this.locks.take(userId);
    if (!hold) {
      res.status(409).type('text/plain; charset=utf-8').send(ACCOUNT_MESSAGES.takeoutRunning);
      return false;
    }
    try {
      res.status(200);
      res.setHeader('Content-Type', 'application/zip');
      res.setHeader(
        'Content-Disposition',
        `attachment; filename="my-data-${new Date().toISOString().slice(0, 10)}.zip"`,
      );
      res.setHeader('Cache-Control', 'no-store');
      const zip = new ZipOut(res);
      for (const area of TAKEOUT_AREAS) await this.area(zip, area, userId);
      await zip.end();
      return true;
    } finally {
      await hold.release();
    }
  }

  private async area(zip: ZipOut, area: TakeoutArea, userId: string): Promise<void> {
    switch (area) {
      case 'templates': {
        const templates = () => this.templates(userId);
        await zip.file('templates.json', (put) => jsonArray(put, templates()));
        await zip.file('templates.csv', async (put) => {
          let header: string[] | undefined;
          for await (const t of templates()) {
            if (!header) {
              header = Object.keys(t);
              await put(`\uFEFF${header.join(',')}\r\n`);
            }
            await put(csvRow(header.map((k) => (t as Record<string, unknown>)[k])));
          }
          if (!header) await put('\uFEFF\r\n');
        });
        return;
      }
      case 'campaigns': {
        await zip.file('campaigns.json', async (put) => {
          let first = true;
          await put('[');
          for await (const job of this.campaigns(userId)) {
            const head = JSON.stringify(job);
            await put(`${first ? '\n' : ',\n'}${head.slice(0, -1)},"results":`);
            await jsonArray(put, this.results(userId, job.jobId));
            await put('}');
            first = false;
          }
          await put('\n]\n');
        });
        await zip.file('campaigns.csv', (put) =>
          csvRows(put, CAMPAIGN_COLUMNS.join(','), this.campaigns(userId), (j) => {
            const flat: Record<string, unknown> = { ...j, ...j.progress, ...j.receipts };
            return csvRow(CAMPAIGN_COLUMNS.map((c) => flat[c]));
          }),
        );
        await zip.file('campaign-results.csv', async (put) => {
          await put(`\uFEFFcampaignId,${RESULT_COLUMNS.join(',')}\r\n`);
          for await (const job of this.campaigns(userId))
            for await (const r of this.results(userId, job.jobId))
              await put(csvRow([job.jobId, ...RESULT_COLUMNS.map((c) => r[c])]));
        });
        return;
      }
      case 'opt-outs':
        await zip.file('opt-outs.json', (put) => jsonArray(put, this.optOuts(userId)));
        await zip.file('opt-outs.csv', (put) =>
          csvRows(put, 'phoneNumber,reason,at', this.optOuts(userId), (o) => csvRow([o.phoneNumber, o.reason, o.at])),
        );
        return;
      case 'contacts':
        await zip.file('contacts.json', (put) => jsonArray(put, this.contacts(userId)));
        await zip.file('contacts.csv', (put) =>
          csvRows(put, CONTACT_CSV_HEADER, this.contacts(userId), (c) => `${contactCsvLine(c)}\r\n`),
        );
        return;
      case 'preferences': {
        const preferences = await this.rpc.call('dashboard.preferences.get', { userId });
        await zip.file('preferences.json', (put) => put(`${JSON.stringify(preferences, null, 2)}\n`));
        await zip.file('preferences.csv', (put) => keyValueCsv(put, preferences));
        return;
      }
      case 'policy': {
        const { policy } = await this.rpc.call('jobs.policy.get', { userId });
        await zip.file('policy.json', (put) => put(`${JSON.stringify(policy, null, 2)}\n`));
        await zip.file('policy.csv', (put) => keyValueCsv(put, policy));
        return;
      }
      case 'audit-log':
        await zip.file('audit-log.json', (put) => jsonArray(put, this.audit(userId)));
        await zip.file('audit-log.csv', (put) =>
          csvRows(put, 'kind,at,actor,address,details', this.audit(userId), (e) =>
            csvRow([e.kind, e.at, e.actor, e.address, e.details]),
          ),
        );
        return;
    }
  }

  private async *templates(userId: string) {
    yield* await this.rpc.call('templates.list', { userId });
  }

  private async *campaigns(userId: string) {
    let cursor: string | undefined;
    do {
      const page = await this.rpc.call('jobs.list', {
        userId,
        limit: String(RESULTS_LIMITS.historyPageMax),
        ...(cursor ? { cursor } : {}),
      });
      yield* page.jobs;
      cursor = page.nextCursor ?? undefined;
    } while (cursor);
  }

  private async *results(userId: string, jobId: string) {
    let cursor: string | undefined;
    do {
      const page = await this.rpc.call('jobs.results', {
        userId,
        jobId,
        limit: String(RESULTS_LIMITS.reportPageMax),
        ...(cursor ? { cursor } : {}),
      });
      yield* page.results;
      cursor = page.nextCursor ?? undefined;
    } while (cursor);
  }

  private async *optOuts(userId: string) {
    let cursor: string | undefined;
    do {
      const page = await this.rpc.call('jobs.optouts.list', {
        userId,
        limit: String(OPT_OUT_LIMITS.listPageMax),
        ...(cursor ? { cursor } : {}),
      });
      yield* page.optOuts;
      cursor = page.nextCursor ?? undefined;
    } while (cursor);
  }

  private async *contacts(userId: string) {
    let cursor: string | undefined;
    do {
      const page = await this.rpc.call('contacts.list', {
        userId,
        query: { limit: String(CONTACTS_LIMITS.listPageMax), ...(cursor ? { cursor } : {}) },
      });
      yield* page.contacts;
      cursor = page.nextCursor ?? undefined;
    } while (cursor);
  }

  private async *audit(userId: string) {
    let cursor: string | undefined;
    do {
      const page = await this.rpc.call('integrations.audit.list', {
        userId,
        limit: ACCOUNT_LIMITS.auditPageMax,
        ...(cursor ? { cursor } : {}),
      });
      yield* page.entries;
      cursor = page.nextCursor ?? undefined;
    } while (cursor);
  }
}

async function keyValueCsv(put: Put, value: object): Promise<void> {
  await put('\uFEFFsetting,value\r\n');
  for (const [k, v] of Object.entries(value)) await put(csvRow([k, v]));
}
